package tui

import (
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

func TestPaletteFiltersCompletesAndShowsTheHint(t *testing.T) {
	h := newHarness(t, Options{})
	h.typeText("/")
	view := h.view()
	for _, want := range []string{"/help", "/model [name]", "Switch the model"} {
		if !strings.Contains(view, want) {
			t.Errorf("palette lacks %q:\n%s", want, view)
		}
	}
	h.typeText("mdl")
	if it, ok := h.m.pop.selected(); !ok || it.label != "/model" {
		t.Fatalf("fuzzy match of mdl = %+v", it)
	}
	h.press("tab")
	if got := h.m.ed.String(); got != "/model " {
		t.Fatalf("tab completed to %q", got)
	}
	if !strings.Contains(h.view(), "/model [name]") || h.m.pop.open() {
		t.Errorf("hint missing or palette still open:\n%s", h.view())
	}
}

func TestPaletteEnterRunsTheCommand(t *testing.T) {
	h := newHarness(t, Options{})
	h.typeText("/hel")
	h.press("enter")
	h.waitScreen("Commands:")
	if !strings.Contains(h.screen(), "❯ /help") || !strings.Contains(h.screen(), "/compact [instructions]") {
		t.Errorf("help output:\n%s", h.screen())
	}
}

func TestUnknownCommandSuggestsTheNearest(t *testing.T) {
	h := newHarness(t, Options{})
	h.typeText("/hlep")
	h.press("esc") // close the palette
	h.press("enter")
	h.waitScreen("Unknown command /hlep. Did you mean /help?")
}

func TestCommandNeedingAnArgumentShowsItsHint(t *testing.T) {
	reg := newRegistryWith(t, "rename", "<new name>")
	h := newHarness(t, Options{Commands: reg})
	h.typeText("/rename")
	h.press("esc", "enter")
	h.waitScreen("/rename needs an argument: /rename <new name>")
}

func TestCtrlCClearsThenExits(t *testing.T) {
	h := newHarness(t, Options{})
	h.typeText("half a thought")
	h.press("ctrl+c")
	if !h.m.ed.empty() || !strings.Contains(h.view(), "Press Ctrl+C again to exit") {
		t.Fatalf("first Ctrl+C: input %q, view:\n%s", h.m.ed.String(), h.view())
	}
	h.press("ctrl+c")
	h.waitFor("quit", func() bool { return h.quit })
}

func TestCtrlDExitsOnlyOnAnEmptyInput(t *testing.T) {
	h := newHarness(t, Options{})
	h.typeText("ab")
	h.press("left", "ctrl+d")
	if h.m.quitting || h.m.ed.String() != "a" {
		t.Fatalf("Ctrl+D on text: quitting=%v input=%q", h.m.quitting, h.m.ed.String())
	}
	h.press("ctrl+u", "ctrl+d")
	h.waitFor("quit", func() bool { return h.quit })
}

func TestShiftTabCyclesPermissionModes(t *testing.T) {
	h := newHarness(t, Options{})
	for _, want := range []string{"accept edits", "plan mode", "default mode"} {
		h.press("shift+tab")
		if !strings.Contains(h.view(), want) {
			t.Errorf("status does not show %q:\n%s", want, h.view())
		}
	}
	if got := strings.Join(h.modes, ","); got != "acceptEdits,plan,default" {
		t.Errorf("SetMode calls = %s", got)
	}
}

func TestMultilineInput(t *testing.T) {
	h := newHarness(t, Options{})
	h.typeText("one")
	h.press("ctrl+j")
	h.typeText("two\\")
	h.press("enter")
	h.typeText("three")
	h.press("shift+enter")
	h.send(tea.PasteMsg{Content: "pasted\r\nlines\n"})
	if got := h.m.ed.String(); got != "one\ntwo\nthree\npasted\nlines\n" {
		t.Fatalf("input = %q", got)
	}
	if h.m.isBusy() {
		t.Fatal("a newline key or a paste sent the prompt")
	}
	view := h.view()
	if !strings.Contains(view, "│ ❯ one") || !strings.Contains(view, "│   three") {
		t.Errorf("multi-line input view:\n%s", view)
	}
}

func TestHistoryPersistsAcrossSessions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "projects", "p", "history.jsonl")
	h := newHarness(t, Options{HistoryPath: path})
	for _, p := range []string{"/help", "/cost"} {
		h.typeText(p)
		h.press("esc", "enter")
		h.idle()
	}
	h2 := newHarness(t, Options{HistoryPath: path})
	h2.typeText("draft")
	h2.press("up")
	if got := h2.m.ed.String(); got != "/cost" {
		t.Fatalf("up = %q", got)
	}
	h2.press("up")
	if got := h2.m.ed.String(); got != "/help" {
		t.Fatalf("up twice = %q", got)
	}
	h2.press("down", "down")
	if got := h2.m.ed.String(); got != "draft" {
		t.Fatalf("down back to the draft = %q", got)
	}
}
