package commands

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/coda-cli/coda/internal/config"
	"github.com/coda-cli/coda/internal/llm"
)

func runStatus(_ context.Context, c *Context) (Result, error) {
	var b strings.Builder
	row := func(k, v string) { fmt.Fprintf(&b, "  %-16s %s\n", k, v) }
	var info Info
	if c.Session != nil {
		info = c.Session.Info()
	}
	b.WriteString("Status\n")
	row("Version", "coda "+info.Version)
	if info.SessionID != "" {
		row("Session", info.SessionID)
	}
	if info.Cwd != "" {
		row("Directory", info.Cwd)
	}
	if c.Agent != nil {
		m := c.Agent.Model().Info
		row("Model", m.Key())
		row("Provider", m.Provider)
		row("Context window", shortCount(m.ContextWindow)+" tokens")
	}
	mode := info.PermissionMode
	if c.UI != nil {
		mode = c.UI.PermissionMode()
	}
	if mode != "" {
		row("Permission mode", mode)
	}
	if c.Settings != nil {
		files := c.Settings.Sources()
		if len(files) == 0 {
			row("Settings", "none (defaults)")
		}
		for i, f := range files {
			k := ""
			if i == 0 {
				k = "Settings"
			}
			row(k, f)
		}
	}
	return Result{Output: strings.TrimRight(b.String(), "\n")}, nil
}

func runCost(_ context.Context, c *Context) (Result, error) {
	if c.Agent == nil {
		return Result{Output: "No usage yet."}, nil
	}
	u, cost := c.Agent.Totals()
	var b strings.Builder
	fmt.Fprintf(&b, "Total cost:    $%.4f\n", cost)
	fmt.Fprintf(&b, "Input tokens:  %s (%s read from cache, %s written to cache)\n",
		shortCount(u.TotalInput()), shortCount(u.CacheReadInputTokens), shortCount(u.CacheCreationInputTokens))
	fmt.Fprintf(&b, "Output tokens: %s", shortCount(u.OutputTokens))
	return Result{Output: b.String()}, nil
}

// bytesPerToken is the rough ratio /context estimates with.
const bytesPerToken = 4

// imageTokens is what one image costs, roughly, whatever its bytes.
const imageTokens = 1600

func runContext(_ context.Context, c *Context) (Result, error) {
	var parts ContextParts
	if c.Session != nil {
		parts = c.Session.ContextParts()
	}
	window := 0
	model := ""
	if c.Agent != nil {
		info := c.Agent.Model().Info
		window, model = info.ContextWindow, info.Key()
	}
	toolBytes := 0
	for _, t := range parts.Tools {
		toolBytes += len(t.Name) + len(t.Description) + len(t.InputSchema)
	}
	var msgs []llm.Message
	if c.Conv != nil {
		msgs = c.Conv.Messages()
	}
	rows := []struct {
		name   string
		tokens int
	}{
		{"System prompt", len(parts.System) / bytesPerToken},
		{"Tools", toolBytes / bytesPerToken},
		{"Instructions", len(parts.Instructions) / bytesPerToken},
		{"Messages", messageTokens(msgs)},
	}
	used := 0
	for _, r := range rows {
		used += r.tokens
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Context usage · %s · %s tokens window\n", model, shortCount(window))
	if window > 0 {
		b.WriteString("  " + bar(used, window, 40) + "\n")
	}
	line := func(name string, tokens int) {
		pct := 0.0
		if window > 0 {
			pct = 100 * float64(tokens) / float64(window)
		}
		fmt.Fprintf(&b, "  %-14s %8s  %5.1f%%\n", name, shortCount(tokens), pct)
	}
	for _, r := range rows {
		line(r.name, r.tokens)
	}
	line("Free", max(window-used, 0))
	b.WriteString("Estimated at 4 bytes per token.")
	return Result{Output: b.String()}, nil
}

func messageTokens(msgs []llm.Message) int {
	n, images := 0, 0
	var count func(blocks []llm.Block)
	count = func(blocks []llm.Block) {
		for _, bl := range blocks {
			switch v := bl.(type) {
			case llm.Text:
				n += len(v.Text)
			case llm.Thinking:
				n += len(v.Thinking)
			case llm.RedactedThinking:
				n += len(v.Data)
			case llm.ToolUse:
				n += len(v.Name) + len(v.Input)
			case llm.ToolResult:
				count(v.Content)
			case llm.Image:
				images++
			}
		}
	}
	for _, m := range msgs {
		count(m.Blocks)
	}
	return n/bytesPerToken + images*imageTokens
}

// bar draws used/total as a line of cells.
func bar(used, total, cells int) string {
	filled := min(cells, used*cells/max(total, 1))
	if used > 0 && filled == 0 {
		filled = 1
	}
	return strings.Repeat("█", filled) + strings.Repeat("░", cells-filled)
}

func runPermissions(_ context.Context, c *Context) (Result, error) {
	if c.Args != "" {
		list, rule, _ := strings.Cut(c.Args, " ")
		rule = strings.TrimSpace(rule)
		switch list {
		case "allow", "ask", "deny":
		default:
			return Result{}, &InputError{Msg: "usage: /permissions allow|ask|deny <rule>, e.g. /permissions allow Bash(npm test)"}
		}
		if rule == "" {
			return Result{}, &InputError{Msg: fmt.Sprintf("/permissions %s needs a rule, e.g. /permissions %s Bash(npm test)", list, list)}
		}
		if c.Session == nil {
			return Result{}, errors.New("rules cannot be saved here")
		}
		file, err := c.Session.AddRule(list, rule)
		if err != nil {
			return Result{}, err
		}
		return Result{Output: fmt.Sprintf("Added %s rule %s to %s.", list, rule, file)}, nil
	}
	var b strings.Builder
	mode := ""
	if c.UI != nil {
		mode = c.UI.PermissionMode()
	} else if c.Session != nil {
		mode = c.Session.Info().PermissionMode
	}
	if mode != "" {
		fmt.Fprintf(&b, "Permission mode: %s\n", mode)
	}
	var rules []config.Rule
	if c.Settings != nil {
		rules = c.Settings.Rules()
	}
	listed := false
	for _, list := range []string{"deny", "ask", "allow"} {
		var lines []string
		for _, r := range rules {
			if r.List != list {
				continue
			}
			src := string(r.Scope)
			if r.Path != "" {
				src += ": " + r.Path
			}
			lines = append(lines, fmt.Sprintf("  %s  (%s)", r.Rule, src))
		}
		if len(lines) == 0 {
			continue
		}
		listed = true
		fmt.Fprintf(&b, "%s:\n%s\n", strings.ToUpper(list[:1])+list[1:], strings.Join(lines, "\n"))
	}
	if !listed {
		b.WriteString("No permission rules.\n")
	}
	b.WriteString("Add one with /permissions allow|ask|deny <rule> (saved to .coda/settings.local.json).")
	return Result{Output: b.String()}, nil
}

// shortCount writes token counts the way the status line does: 950,
// 12.3k, 1.2M.
func shortCount(n int) string {
	switch {
	case n >= 1_000_000:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/1e6)) + "M"
	case n >= 1000:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/1e3)) + "k"
	}
	return fmt.Sprint(n)
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }
