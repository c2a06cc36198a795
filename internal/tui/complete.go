package tui

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/coda-cli/coda/internal/commands"
	"github.com/coda-cli/coda/internal/llm"
	"github.com/coda-cli/coda/internal/tools"
)

// refreshPopup opens, filters or closes the completion list after the
// input changed.
func (m *Model) refreshPopup() tea.Cmd {
	text := m.ed.String()
	if m.popDismissed != nil {
		if *m.popDismissed == text {
			return nil
		}
		m.popDismissed = nil
	}
	before := string(m.ed.buf[:m.ed.pos])
	if strings.HasPrefix(text, "/") && !strings.ContainsAny(before, " \n") {
		m.pop.set(popupCommands, before[1:], 0, commandItems(m.o.Commands, before[1:]))
		return nil
	}
	if tok, start := m.ed.tokenAt(); strings.HasPrefix(tok, "@") {
		if m.files == nil {
			return m.loadFiles()
		}
		m.pop.set(popupFiles, tok[1:], start, fileItems(m.files, tok[1:]))
		return nil
	}
	m.pop.close()
	return nil
}

// acceptPopup puts the selected completion into the input.
func (m *Model) acceptPopup() {
	it, ok := m.pop.selected()
	if !ok {
		return
	}
	switch m.pop.kind {
	case popupCommands:
		m.ed.set(it.value + " ")
	case popupFiles:
		m.ed.replaceRange(m.pop.start, it.value+" ")
	}
	text := m.ed.String()
	m.popDismissed = &text
	m.pop.close()
}

// enterPopup is Enter while the list is open: a file is completed; a
// command runs unless it needs an argument, when its hint shows.
func (m *Model) enterPopup() tea.Cmd {
	it, _ := m.pop.selected()
	kind := m.pop.kind
	m.acceptPopup()
	if kind == popupCommands && !it.cmd.ArgRequired {
		return m.submit()
	}
	return nil
}

// argHint is the argument hint shown after "/name " until an argument is
// typed.
func (m *Model) argHint() string {
	text := m.ed.String()
	name, args, ok := commands.Parse(text)
	if !ok || args != "" || !strings.HasSuffix(text, " ") || m.o.Commands == nil {
		return ""
	}
	cmd, found := m.o.Commands.Lookup(name)
	if !found || cmd.ArgHint == "" {
		return ""
	}
	return cmd.ArgHint
}

// maxListedFiles bounds the files offered for @ completion.
const maxListedFiles = 20000

// loadFiles lists the project's files in the background.
func (m *Model) loadFiles() tea.Cmd {
	if m.filesLoading {
		return nil
	}
	m.filesLoading = true
	list := m.o.Files
	dir := m.o.ProjectDir
	ctx := m.ctx
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		var files []string
		var err error
		if list != nil {
			files, err = list(ctx)
		} else {
			files, err = projectFiles(ctx, dir)
		}
		if err != nil || files == nil {
			files = []string{}
		}
		return filesMsg(files)
	}
}

// projectFiles lists files git does not ignore (tracked and untracked),
// or walks the directory when it is not a repository.
func projectFiles(ctx context.Context, dir string) ([]string, error) {
	cmd := exec.CommandContext(ctx, "git", "ls-files", "--cached", "--others", "--exclude-standard", "-z")
	cmd.Dir = dir
	if out, err := cmd.Output(); err == nil {
		var files []string
		for _, f := range bytes.Split(out, []byte{0}) {
			if len(f) > 0 && len(files) < maxListedFiles {
				files = append(files, string(f))
			}
		}
		sort.Strings(files)
		return files, nil
	}
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || ctx.Err() != nil {
			return filepath.SkipDir
		}
		name := d.Name()
		if d.IsDir() {
			if p != dir && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if len(files) >= maxListedFiles {
			return filepath.SkipAll
		}
		if rel, err := filepath.Rel(dir, p); err == nil {
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

// mentionRe finds @path mentions: an @ at the start or after a space.
var mentionRe = regexp.MustCompile(`(?:^|\s)@([^\s@]+)`)

// maxAttachBytes caps a file attached with @.
const maxAttachBytes = 256 << 10

// promptBlocks is the prompt plus one block per file it mentions with @;
// problems with a mention become notices.
func (m *Model) promptBlocks(text string) []llm.Block {
	blocks, warnings := attachMentions(text, m.o.ProjectDir, m.o.Env)
	for _, w := range warnings {
		m.notice(noticeWarn, w)
	}
	return blocks
}

// attachMentions is text plus one block per file or directory it names
// with @. The model reads a whole attached file, so the file counts as
// read for Edit. A mention that is no path is left alone (an @handle).
func attachMentions(text, dir string, env *tools.Env) ([]llm.Block, []string) {
	if env != nil {
		dir = env.Cwd()
	}
	blocks := []llm.Block{llm.Text{Text: text}}
	var warnings []string
	seen := map[string]bool{}
	for _, match := range mentionRe.FindAllStringSubmatch(text, -1) {
		ref := strings.TrimRight(match[1], ".,;:!?)]}'\"")
		if ref == "" || seen[ref] {
			continue
		}
		seen[ref] = true
		b, warning := attach(ref, dir, env)
		if b != nil {
			blocks = append(blocks, b)
		}
		if warning != "" {
			warnings = append(warnings, warning)
		}
	}
	return blocks, warnings
}

func attach(ref, dir string, env *tools.Env) (llm.Block, string) {
	path := ref
	if strings.HasPrefix(path, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, path[2:])
		}
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, ""
	}
	if info.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, fmt.Sprintf("@%s: %v", ref, err)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "Directory %s (attached by the user with @%s):\n", path, ref)
		for i, e := range entries {
			if i == 200 {
				fmt.Fprintf(&b, "… %d more\n", len(entries)-i)
				break
			}
			name := e.Name()
			if e.IsDir() {
				name += "/"
			}
			b.WriteString(name + "\n")
		}
		return llm.Text{Text: b.String()}, ""
	}
	if info.Size() > maxAttachBytes {
		return nil, fmt.Sprintf("@%s is %s; not attached (the model can Read parts of it)", ref, byteCount(int(info.Size())))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Sprintf("@%s: %v", ref, err)
	}
	if bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
		return nil, fmt.Sprintf("@%s is a binary file; not attached", ref)
	}
	if env != nil && env.Files != nil {
		env.Files.Record(path, data, info.ModTime())
	}
	return llm.Text{Text: fmt.Sprintf("Contents of %s (attached by the user with @%s):\n\n%s", path, ref, numbered(data))}, ""
}

// numbered formats a file the way Read does: a right-aligned line number
// and a tab before each line.
func numbered(data []byte) string {
	var b strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), maxAttachBytes+1)
	n := 0
	for sc.Scan() {
		n++
		fmt.Fprintf(&b, "%6d\t%s\n", n, sc.Text())
	}
	if n == 0 {
		return "(empty file)"
	}
	return b.String()
}
