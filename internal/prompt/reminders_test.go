package prompt

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coda-cli/coda/internal/tools"
)

var fixedTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func fixed(texts ...string) ReminderSource { return func() []string { return texts } }

func TestRegistryOrderReplaceRemove(t *testing.T) {
	r := NewReminders()
	r.Register("b", fixed("B1", "", "B2"))
	r.Register("a", fixed("A"))
	r.Register("c", fixed())
	if got := r.Collect(); !slices.Equal(got, []string{"B1", "B2", "A"}) {
		t.Fatalf("collect = %q", got)
	}
	r.Register("b", fixed("B-new"))
	r.Unregister("a")
	r.Unregister("missing")
	if got := r.Collect(); !slices.Equal(got, []string{"B-new"}) {
		t.Fatalf("after replace and remove = %q", got)
	}
	if got := r.Names(); !slices.Equal(got, []string{"b", "c"}) {
		t.Fatalf("names = %q", got)
	}
}

func TestTodoNudge(t *testing.T) {
	todos := &tools.Todos{}
	src := TodoNudge(todos, 3)
	quiet := func(n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			if got := src(); got != nil {
				t.Fatalf("call %d nudged early: %q", i, got)
			}
		}
	}
	quiet(5) // no list: never
	todos.Set([]tools.Todo{{Content: "write the parser", Status: "in_progress"}, {Content: "test it", Status: "pending"}})
	quiet(3) // the change itself, then two quiet messages
	got := src()
	if len(got) != 1 || !strings.Contains(got[0], "1. [in_progress] write the parser") || !strings.Contains(got[0], "2. [pending] test it") {
		t.Fatalf("nudge = %q", got)
	}
	quiet(2)
	if got := src(); got == nil {
		t.Fatal("no second nudge after another quiet stretch")
	}
	todos.Set([]tools.Todo{{Content: "write the parser", Status: "completed"}})
	quiet(10) // all done: nothing to nudge about
}

func TestChangedFiles(t *testing.T) {
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a.go"), filepath.Join(dir, "b.go"), filepath.Join(dir, "c.go")
	files := tools.NewFileState()
	write := func(p, content string, mt time.Time) {
		t.Helper()
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	record := func(p string) {
		t.Helper()
		content, mt, err := tools.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		files.Record(p, content, mt)
	}
	write(a, "package a", fixedTime)
	write(b, "package b", fixedTime)
	write(c, "package c", fixedTime)
	record(a)
	record(b)
	record(c)
	src := ChangedFiles(files)
	if got := src(); got != nil {
		t.Fatalf("nothing changed, got %q", got)
	}

	write(a, "package a // edited by the user", fixedTime.Add(time.Minute))
	write(b, "package b", fixedTime.Add(time.Minute)) // touched, same content
	if err := os.Remove(c); err != nil {
		t.Fatal(err)
	}
	got := src()
	if len(got) != 2 || !strings.Contains(got[0], a) || strings.Contains(got[0], b) || !strings.Contains(got[1], c) ||
		!strings.Contains(got[1], "no longer exist") {
		t.Fatalf("reminders = %q", got)
	}
	if got := src(); got != nil {
		t.Fatalf("the same change reported twice: %q", got)
	}

	record(a) // the model reads it again
	if got := src(); got != nil {
		t.Fatalf("a re-read file reported: %q", got)
	}
	write(a, "package a // edited again", fixedTime.Add(2*time.Minute))
	if got := src(); len(got) != 1 || !strings.Contains(got[0], a) {
		t.Fatalf("second change not reported: %q", got)
	}
}
