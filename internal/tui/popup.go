package tui

import (
	"fmt"
	"sort"
	"strings"

	"github.com/coda-cli/coda/internal/commands"
)

// maxPopupRows bounds the completion list under the input.
const maxPopupRows = 8

type popupKind int

const (
	popupNone popupKind = iota
	popupCommands
	popupFiles
)

// popup is the completion list under the input: slash commands while the
// first word starts with "/", files while the word at the cursor starts
// with "@".
type popup struct {
	kind  popupKind
	query string
	items []popupItem
	sel   int
	start int // where the completed word starts in the editor
}

type popupItem struct {
	value  string // what Tab puts in the input
	label  string
	hint   string // argument hint after a command name
	detail string
	cmd    *commands.Command
}

func (p *popup) open() bool { return p.kind != popupNone && len(p.items) > 0 }

func (p *popup) close() { *p = popup{} }

func (p *popup) move(d int) {
	if len(p.items) > 0 {
		p.sel = (p.sel + d + len(p.items)) % len(p.items)
	}
}

func (p *popup) selected() (popupItem, bool) {
	if !p.open() {
		return popupItem{}, false
	}
	return p.items[p.sel], true
}

// set replaces the list; the selection survives while the query is the
// same.
func (p *popup) set(kind popupKind, query string, start int, items []popupItem) {
	if p.kind != kind || p.query != query {
		p.sel = 0
	}
	p.kind, p.query, p.start, p.items = kind, query, start, items
	if p.sel >= len(items) {
		p.sel = 0
	}
}

// commandItems lists the commands matching query (the text after "/").
func commandItems(reg *commands.Registry, query string) []popupItem {
	if reg == nil {
		return nil
	}
	cmds := reg.Commands()
	type cand struct {
		cmd   *commands.Command
		score int
	}
	var found []cand
	for _, c := range cmds {
		best, ok := fuzzyScore(query, c.Name)
		for _, a := range c.Aliases {
			if s, aok := fuzzyScore(query, a); aok && (!ok || s-5 > best) {
				best, ok = s-5, true
			}
		}
		if ok {
			found = append(found, cand{c, best})
		}
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].score > found[j].score })
	items := make([]popupItem, 0, len(found))
	for _, f := range found {
		items = append(items, popupItem{value: "/" + f.cmd.Name, label: "/" + f.cmd.Name,
			hint: f.cmd.ArgHint, detail: f.cmd.Description, cmd: f.cmd})
	}
	return items
}

// fileItems lists the project files matching query (the text after "@").
func fileItems(files []string, query string) []popupItem {
	idx := fuzzyRank(query, files, 50)
	items := make([]popupItem, len(idx))
	for i, j := range idx {
		items[i] = popupItem{value: "@" + files[j], label: files[j]}
	}
	return items
}

// view draws the visible window of the list.
func (p *popup) view(th *theme, width int) string {
	if !p.open() {
		return ""
	}
	first := 0
	if p.sel >= maxPopupRows {
		first = p.sel - maxPopupRows + 1
	}
	last := min(first+maxPopupRows, len(p.items))
	labelW := 0
	for _, it := range p.items[first:last] {
		labelW = max(labelW, cols(it.label)+1+cols(it.hint))
	}
	labelW = min(labelW, width/2)
	var lines []string
	for i := first; i < last; i++ {
		it := p.items[i]
		label := it.label
		if it.hint != "" {
			label += " " + it.hint
		}
		label = truncate(label, labelW)
		line := "  " + label + strings.Repeat(" ", max(labelW-cols(label), 0))
		if it.detail != "" {
			line += "  " + it.detail
		}
		line = truncate(line, width)
		if i == p.sel {
			lines = append(lines, th.selected.Render(line))
		} else {
			lines = append(lines, th.dim.Render(line))
		}
	}
	if n := len(p.items) - last; n > 0 {
		lines = append(lines, th.dim.Render(fmt.Sprintf("  … %d more", n)))
	}
	return strings.Join(lines, "\n")
}
