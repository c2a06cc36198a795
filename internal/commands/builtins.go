package commands

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/coda-cli/coda/internal/agent"
)

// Builtins returns coda's built-in commands.
func Builtins() []*Command {
	return []*Command{
		{Name: "help", Aliases: []string{"?"}, Description: "Show commands and keys", Kind: Local, WhileBusy: true, Run: runHelp},
		{Name: "clear", Aliases: []string{"reset", "new"}, Description: "Start a new conversation", Kind: LocalUI, Run: runClear},
		{Name: "compact", ArgHint: "[instructions]", Description: "Summarise the conversation to free context", Kind: Local, Run: runCompact},
		{Name: "model", ArgHint: "[name]", Description: "Switch the model (a picker without a name)", Kind: LocalUI, Run: runModel},
		{Name: "permissions", Aliases: []string{"allowed-tools"}, ArgHint: "[allow|ask|deny <rule>]", Description: "View permission rules, or add one", Kind: Local, WhileBusy: true, Run: runPermissions},
		{Name: "plan", ArgHint: "[prompt]", Description: "Toggle plan mode: read and plan, change nothing", Kind: LocalUI, Run: runPlan},
		{Name: "status", Description: "Version, model, provider and settings files in effect", Kind: Local, WhileBusy: true, Run: runStatus},
		{Name: "cost", Description: "Tokens and cost of this session", Kind: Local, WhileBusy: true, Run: runCost},
		{Name: "context", Description: "What fills the context window", Kind: Local, WhileBusy: true, Run: runContext},
		{Name: "rewind", Aliases: []string{"checkpoint"}, Description: "Restore the code and/or conversation to before a prompt", Kind: LocalUI, Run: runRewind},
		{Name: "resume", ArgHint: "[session]", Description: "Switch to another session of this project (a picker without an id)", Kind: LocalUI, Run: runResume},
		{Name: "init", Description: "Write an AGENTS.md that explains this repository to coda", Kind: Prompt, Run: runInit},
		{Name: "exit", Aliases: []string{"quit"}, Description: "Leave coda", Kind: LocalUI, WhileBusy: true, Run: runExit},
	}
}

func runHelp(_ context.Context, c *Context) (Result, error) {
	var b strings.Builder
	b.WriteString("Commands:\n")
	cmds := c.Commands.Commands()
	width := 0
	for _, cmd := range cmds {
		width = max(width, len(usage(cmd)))
	}
	for _, cmd := range cmds {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, usage(cmd), cmd.Description)
	}
	if c.UI != nil {
		b.WriteString(`
Keys:
  Enter              send (queued while coda works)
  Shift+Enter, Ctrl+J, or \ then Enter   new line
  Up / Down          history
  /  @  !            commands, attach a file, run a shell command
  Shift+Tab          cycle permission mode (default, acceptEdits, plan)
  Esc                interrupt; twice on an empty input: rewind (edit a previous prompt, restore files)
  Ctrl+O             full transcript with tool output
  Ctrl+C             clear the input; twice: exit (Ctrl+D on an empty input too)
`)
	}
	return Result{Output: strings.TrimRight(b.String(), "\n")}, nil
}

func usage(c *Command) string {
	if c.ArgHint == "" {
		return "/" + c.Name
	}
	return "/" + c.Name + " " + c.ArgHint
}

func runClear(_ context.Context, c *Context) (Result, error) {
	if c.Conv != nil {
		c.Conv.Replace(nil)
	}
	if c.Session != nil {
		if err := c.Session.Clear(); err != nil {
			return Result{}, fmt.Errorf("clear: %w", err)
		}
	}
	if c.UI != nil {
		c.UI.Clear()
	}
	return Result{Output: "Started a new conversation."}, nil
}

func runCompact(ctx context.Context, c *Context) (Result, error) {
	var comp agent.Compactor
	if c.Session != nil {
		comp = c.Session.Compactor()
	}
	if comp == nil {
		return Result{Output: "Compaction is not available in this build yet; /clear starts a new conversation."}, nil
	}
	if c.Conv == nil || c.Conv.Len() == 0 {
		return Result{Output: "Nothing to compact yet."}, nil
	}
	before := c.Conv.Len()
	var err error
	if mc, ok := comp.(ManualCompactor); ok {
		err = mc.CompactWith(ctx, c.Conv, c.Args)
	} else {
		err = comp.Compact(ctx, c.Conv, true)
	}
	if err != nil {
		return Result{}, fmt.Errorf("compact: %w", err)
	}
	return Result{Output: fmt.Sprintf("Compacted the conversation: %d messages -> %d.", before, c.Conv.Len())}, nil
}

func runModel(_ context.Context, c *Context) (Result, error) {
	current := ""
	if c.Agent != nil {
		current = c.Agent.Model().Info.Key()
	}
	if c.Args != "" {
		return setModel(c, c.Args)
	}
	if c.Session == nil {
		return Result{Output: "Current model: " + current}, nil
	}
	models := c.Session.Models()
	if c.UI == nil {
		var b strings.Builder
		fmt.Fprintf(&b, "Current model: %s\nAvailable (switch with /model <name>):\n", current)
		for _, m := range models {
			mark := " "
			if m.Key() == current {
				mark = "*"
			}
			fmt.Fprintf(&b, " %s %s\n", mark, m.Key())
		}
		return Result{Output: strings.TrimRight(b.String(), "\n")}, nil
	}
	choices := make([]Choice, 0, len(models))
	for _, m := range models {
		detail := fmt.Sprintf("%s context", shortCount(m.ContextWindow))
		if m.InputPrice > 0 || m.OutputPrice > 0 {
			detail += fmt.Sprintf(" · $%g/$%g per Mtok", m.InputPrice, m.OutputPrice)
		}
		choices = append(choices, Choice{Value: m.Key(), Label: m.Key(), Detail: detail, Current: m.Key() == current})
	}
	c.UI.Choose("Select a model", choices, func(_ context.Context, value string) (Result, error) {
		return setModel(c, value)
	})
	return Result{}, nil
}

func setModel(c *Context, name string) (Result, error) {
	if c.Session == nil {
		return Result{}, errors.New("switching models is not available here")
	}
	info, err := c.Session.SetModel(name)
	if err != nil {
		return Result{}, err
	}
	return Result{Output: fmt.Sprintf("Model set to %s.", info.Key())}, nil
}

func runPlan(_ context.Context, c *Context) (Result, error) {
	if c.UI == nil {
		return Result{}, errors.New("plan mode is for interactive sessions; start coda with --permission-mode plan instead")
	}
	if c.Args != "" {
		c.UI.SetPermissionMode("plan")
		return Result{Output: "Plan mode on.", Prompt: c.Args}, nil
	}
	if c.UI.PermissionMode() == "plan" {
		c.UI.SetPermissionMode("default")
		return Result{Output: "Plan mode off: edits and commands ask for approval again."}, nil
	}
	c.UI.SetPermissionMode("plan")
	return Result{Output: "Plan mode on: coda reads and plans but changes nothing (Shift+Tab or /plan to leave)."}, nil
}

func runExit(_ context.Context, c *Context) (Result, error) {
	if c.UI != nil {
		c.UI.Exit()
	}
	return Result{}, nil
}

func runInit(_ context.Context, c *Context) (Result, error) {
	prompt := initPrompt
	if c.Args != "" {
		prompt += "\n\nAlso take this into account: " + c.Args
	}
	return Result{Prompt: prompt}, nil
}

const initPrompt = `Please analyse this repository and create an AGENTS.md file at its root, which future coding agents working here will read first.

What to include:
1. The commands people actually use: build, lint, test, and how to run a single test.
2. The high-level architecture: the big picture a newcomer needs that only shows across several files (how the parts fit together, where the entry points are, which package owns what).
3. Conventions that are not obvious from one file: error handling, naming, test style, generated code, anything the repository insists on.

Guidelines:
- If an AGENTS.md (or CLAUDE.md, .cursorrules, .github/copilot-instructions.md, README.md) exists, read it first and improve on it rather than starting over; keep what is still true.
- Do not list every file or component: they are easy to discover. Do not invent sections like "tips for development" or generic advice ("write tests", "handle errors") that is not specific to this repository.
- Keep it short and concrete; prefer commands and paths over prose.
- Start the file with:

# AGENTS.md

This file guides coding agents (coda, Claude Code and others) working in this repository.`
