// Package shellparse splits a bash command line into the simple commands it
// would run, so that permission rules and safety checks can judge each one.
//
// It follows the line everywhere a command can hide: pipes and lists,
// subshells and blocks, control structures, function bodies, $(...),
// backticks and <(...), and strings handed to another shell (bash -c, sh -c,
// eval, su -c, watch, find -exec, here-documents fed to a shell, echo piped
// into a shell). Quotes and escapes are resolved, brace expansions expanded,
// and wrapper commands (sudo, env, nice, timeout, xargs...) stripped, so that
// `sudo env X=1 /bin/r\m -rf /` is seen as rm with the arguments -rf and /.
// Nothing is executed: values that only exist at run time ($VAR, $(...)) are
// kept as their source text and the command is marked Dynamic.
package shellparse

import (
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// maxDepth bounds how deeply strings given to other shells are re-parsed.
const maxDepth = 8

// Command is one simple command of a shell line.
type Command struct {
	// Name is the program the shell runs, as a base name with wrappers
	// stripped: "rm" for `sudo /bin/rm -rf x`. Empty for a statement that
	// only assigns variables or redirects (`X=1`, `> file`).
	Name string
	// Program is the program word as written after the wrappers, quotes
	// resolved: "/bin/rm".
	Program string
	// Args are the words after the program, quotes and escapes resolved and
	// braces expanded. Run-time values keep their source text ("$HOME").
	Args []string
	// Assigns are the NAME=value words before the program, including those
	// given to env, resolved like Args.
	Assigns []string
	// Wrappers are the wrapper commands stripped before Program, outermost
	// first, each with its own options: ["sudo -u bob", "nice -n 5"].
	Wrappers []string
	// Redirects are the redirections of the command, in source order.
	Redirects []Redirect
	// Raw is the command as written (assignments, wrappers and arguments,
	// without redirections), normalised to single spaces between words.
	Raw string

	// Dynamic reports that some word depends on run-time values ($VAR,
	// $(...), arguments read by xargs), so Args are not what will run.
	Dynamic bool
	// Opaque reports that the command runs code this parser cannot read:
	// a program name computed at run time, or a script handed over as a
	// run-time value or through a pipe (`bash -c "$X"`, `curl ... | sh`).
	Opaque bool
	// Container reports that the command only runs the script given to it
	// (bash -c S, eval S, sh <<EOF); the commands of that script follow it in
	// Parse's result.
	Container bool
	// Feeds lists the indexes, in Parse's result, of the commands whose
	// output reaches this command: through a pipe into its standard input,
	// through $(...), backticks or <(...) in its words and redirections,
	// or, inside >(...), from the command the substitution belongs to.
	Feeds []int
	// Piped reports that the command is part of a pipeline.
	Piped bool
	// Background reports that the command runs asynchronously (&, coproc).
	Background bool
	// Func is the name of the innermost function whose body holds the
	// command, "" outside function bodies.
	Func string
	// Depth counts the shell strings the command is nested in: 0 for the
	// line itself, 1 inside `bash -c '...'`, and so on.
	Depth int
}

// Redirect is one redirection of a command.
type Redirect struct {
	Op      string // ">", ">>", "<", "<>", ">&", "<&", ">|", "&>", "&>>", "<<", "<<-", "<<<"
	FD      string // the descriptor written before Op, "" if none
	Target  string // the word after Op, resolved; a here-document's delimiter
	Dynamic bool   // Target depends on run-time values
}

// Writes reports whether the redirection opens Target as a file for
// writing. Duplicating a descriptor (2>&1, >&-) writes no file.
func (r Redirect) Writes() bool {
	switch r.Op {
	case ">", ">>", ">|", "&>", "&>>", "<>":
		return true
	case ">&":
		return r.Target != "-" && !isDigits(r.Target)
	}
	return false
}

// Line is the command as Name followed by Args, separated by single spaces:
// the form with every wrapper and assignment stripped.
func (c Command) Line() string {
	return strings.TrimSpace(c.Name + " " + strings.Join(c.Args, " "))
}

// Parse returns every simple command of the bash line src, in the order the
// parser meets them: the commands of a $(...) come before the command using
// its output, a container (bash -c S) before the commands of its script. An
// error means the line is not valid bash (or nests shells too deeply); such
// a line must not run without asking.
func Parse(src string) (cmds []Command, err error) {
	defer func() {
		// The parser is a third-party library fed with model output: a
		// panic there must become a refusal, not a crash.
		if r := recover(); r != nil {
			cmds, err = nil, fmt.Errorf("parse shell command: internal parser error: %v", r)
		}
	}()
	p := &parser{}
	p.script(src, context{})
	if p.err != nil {
		return nil, p.err
	}
	return p.cmds, nil
}

// context is what the walker knows about the surroundings of a statement.
type context struct {
	depth      int
	fn         string
	pipeFrom   []int // commands writing into this statement's standard input
	piped      bool
	background bool
	// fedByCommand marks the inside of >(...): its standard input is the
	// output of the command using it.
	fedByCommand bool
}

type parser struct {
	cmds []Command
	err  error
	// outputReaders collects, while a simple command's words are walked,
	// the commands inside its >(...) substitutions: they read its output.
	outputReaders []int
}

func (p *parser) fail(err error) {
	if p.err == nil {
		p.err = err
	}
}

// script parses src and walks its statements.
func (p *parser) script(src string, ctx context) {
	if ctx.depth > maxDepth {
		p.fail(fmt.Errorf("parse shell command: shells nested more than %d levels deep", maxDepth))
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		p.fail(fmt.Errorf("parse shell command: %w", err))
		return
	}
	for _, s := range f.Stmts {
		p.stmt(s, ctx)
	}
}

func (p *parser) stmt(s *syntax.Stmt, ctx context) {
	if p.err != nil {
		return
	}
	ctx.background = ctx.background || s.Background || s.Coprocess || s.Disown
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		p.call(c, s.Redirs, ctx)
		return
	case nil:
		p.call(&syntax.CallExpr{}, s.Redirs, ctx)
		return
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			start := len(p.cmds)
			left := ctx
			left.piped = true
			p.stmt(c.X, left)
			right := ctx
			right.piped = true
			right.pipeFrom = indexRange(start, len(p.cmds))
			p.stmt(c.Y, right)
		} else {
			p.stmt(c.X, ctx)
			p.stmt(c.Y, ctx)
		}
	case *syntax.FuncDecl:
		inner := ctx
		if c.Name != nil {
			inner.fn = c.Name.Value
		}
		p.stmt(c.Body, inner)
	case *syntax.CoprocClause:
		inner := ctx
		inner.background = true
		p.stmt(c.Stmt, inner)
	case *syntax.DeclClause, *syntax.TestClause, *syntax.ArithmCmd, *syntax.LetClause:
		start := len(p.cmds)
		p.nested(c, ctx)
		cmd := Command{Name: keyword(c), Program: keyword(c), Raw: printNode(c)}
		if d, ok := c.(*syntax.DeclClause); ok {
			for _, a := range d.Args {
				w := resolveAssign(a)
				cmd.Args = append(cmd.Args, w.text)
				cmd.Dynamic = cmd.Dynamic || w.dynamic
			}
		}
		p.add(cmd, start, ctx)
	default: // blocks, subshells, if, while, for, case, time
		p.nested(c, ctx)
	}
	if len(s.Redirs) > 0 {
		// Redirections of a compound command: keep them as a command of
		// their own so that the files they write are checked.
		p.call(&syntax.CallExpr{}, s.Redirs, ctx)
	}
}

// nested walks node for the statements and substitutions inside it.
func (p *parser) nested(node syntax.Node, ctx context) {
	syntax.Walk(node, func(n syntax.Node) bool {
		if p.err != nil {
			return false
		}
		switch n := n.(type) {
		case *syntax.Stmt:
			p.stmt(n, ctx)
			return false
		case *syntax.CmdSubst:
			for _, s := range n.Stmts {
				p.stmt(s, ctx)
			}
			return false
		case *syntax.ProcSubst:
			sub := ctx
			start := len(p.cmds)
			if n.Op == syntax.CmdOut {
				sub.fedByCommand = true
			} else {
				sub.pipeFrom = nil
			}
			for _, s := range n.Stmts {
				p.stmt(s, sub)
			}
			if n.Op == syntax.CmdOut {
				p.outputReaders = append(p.outputReaders, indexRange(start, len(p.cmds))...)
			}
			return false
		}
		return true
	})
}

// call handles a simple command: its substitutions first, then the command.
func (p *parser) call(c *syntax.CallExpr, redirs []*syntax.Redirect, ctx context) {
	start := len(p.cmds)
	outer := p.outputReaders
	p.outputReaders = nil
	defer func() { p.outputReaders = outer }()
	for _, a := range c.Assigns {
		p.nested(a, ctx)
	}
	for _, w := range c.Args {
		p.nested(w, ctx)
	}
	for _, r := range redirs {
		p.nested(r, ctx)
	}
	if p.err != nil {
		return
	}

	var assigns []string
	for _, a := range c.Assigns {
		assigns = append(assigns, resolveAssign(a).text)
	}
	var words []word
	for _, w := range c.Args {
		words = append(words, resolveWord(w)...)
	}
	var rs []Redirect
	var stdin *word // a here-document or here-string: the command's input
	for _, r := range redirs {
		rd := Redirect{Op: r.Op.String()}
		if r.N != nil {
			rd.FD = r.N.Value
		}
		if r.Word != nil {
			t := resolveOne(r.Word)
			rd.Target, rd.Dynamic = t.text, t.dynamic
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			body := word{}
			if r.Hdoc != nil {
				body = resolveHeredoc(r.Hdoc)
			}
			stdin = &body
		case syntax.WordHdoc:
			body := word{text: rd.Target + "\n", dynamic: rd.Dynamic}
			stdin = &body
		}
		rs = append(rs, rd)
	}
	raw := ""
	if len(c.Assigns)+len(c.Args) > 0 {
		raw = printNode(c)
	}
	readers := p.outputReaders
	idx := p.command(words, assigns, rs, raw, stdin, start, ctx)
	for _, r := range readers {
		p.cmds[r].Feeds = append(p.cmds[r].Feeds, idx)
	}
}

// add appends cmd with the surroundings of ctx; the commands from start to
// the end of the list so far are its substitutions.
func (p *parser) add(cmd Command, start int, ctx context) {
	cmd.Feeds = append(append([]int(nil), ctx.pipeFrom...), indexRange(start, len(p.cmds))...)
	cmd.Piped = ctx.piped
	cmd.Background = ctx.background
	cmd.Func = ctx.fn
	cmd.Depth = ctx.depth
	p.cmds = append(p.cmds, cmd)
}

// command builds the command from its resolved words, strips wrappers,
// appends it and then the commands of any script it runs.
func (p *parser) command(words []word, assigns []string, redirs []Redirect, raw string, stdin *word, start int, ctx context) int {
	cmd := Command{Assigns: assigns, Redirects: redirs, Raw: raw}
	for _, w := range words {
		cmd.Dynamic = cmd.Dynamic || w.dynamic
	}
	words, extra := stripWrappers(&cmd, words)
	if len(words) > 0 {
		cmd.Program = words[0].text
		cmd.Name = path.Base(words[0].text)
		if !strings.Contains(words[0].text, "/") {
			cmd.Name = words[0].text
		}
		cmd.Opaque = words[0].dynamic
		for _, w := range words[1:] {
			cmd.Args = append(cmd.Args, w.text)
		}
	}

	src, scripted := inlineScript(cmd.Name, words, stdin, redirs)
	if extra != nil { // env -S, flock -c: the wrapper carries the script
		src, scripted = *extra, true
	}
	if scripted && src.fromStdin {
		if len(ctx.pipeFrom) == 0 && !ctx.fedByCommand {
			scripted = false // a shell reading a terminal: nothing to see
		} else if text, ok := p.echoed(ctx.pipeFrom); ok && !ctx.fedByCommand {
			src = script{text: text}
		} else {
			src.dynamic = true // the program arrives through the pipe
		}
	}
	if scripted && src.dynamic {
		cmd.Opaque = true
		scripted = false
	}
	cmd.Container = scripted
	p.add(cmd, start, ctx)
	idx := len(p.cmds) - 1

	if scripted {
		inner := ctx
		inner.depth++
		p.script(src.text, inner)
	}
	for _, exec := range findExecs(cmd.Name, words) {
		p.command(exec, nil, nil, joinWords(exec), nil, len(p.cmds), ctx)
	}
	return idx
}

// echoed returns the fixed text written by the single echo or printf in
// from, if that is what feeds a pipe.
func (p *parser) echoed(from []int) (string, bool) {
	if len(from) != 1 {
		return "", false
	}
	c := p.cmds[from[0]]
	if c.Dynamic || c.Opaque || len(c.Feeds) > 0 {
		return "", false
	}
	switch c.Name {
	case "echo":
		args := c.Args
		for len(args) > 0 && (args[0] == "-n" || args[0] == "-E") {
			args = args[1:]
		}
		return strings.Join(args, " ") + "\n", true
	case "printf":
		if len(c.Args) == 1 && !strings.ContainsAny(c.Args[0], `%\`) {
			return c.Args[0], true
		}
	}
	return "", false
}

func indexRange(from, to int) []int {
	var r []int
	for i := from; i < to; i++ {
		r = append(r, i)
	}
	return r
}

func keyword(c syntax.Command) string {
	switch c := c.(type) {
	case *syntax.DeclClause:
		return c.Variant.Value
	case *syntax.TestClause:
		return "[["
	case *syntax.ArithmCmd:
		return "(("
	case *syntax.LetClause:
		return "let"
	}
	return ""
}

func printNode(n syntax.Node) string {
	var b strings.Builder
	if err := syntax.NewPrinter(syntax.SingleLine(true)).Print(&b, n); err != nil {
		return ""
	}
	return strings.TrimSpace(b.String())
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
