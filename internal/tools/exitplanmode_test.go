package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExitPlanMode(t *testing.T) {
	mode := "plan"
	tool := NewExitPlanMode(func() (string, error) {
		if mode != "plan" {
			return "", errors.New("not in plan mode")
		}
		mode = "default"
		return mode, nil
	})
	env := NewEnv(t.TempDir())
	r := tool.Run(context.Background(), Call{Input: []byte(`{"plan":"1. change a.go"}`), Env: env})
	if r.IsError || !strings.Contains(r.Text(), "now default") || mode != "default" {
		t.Fatalf("approved plan: %+v, mode %s", r, mode)
	}
	if r := tool.Run(context.Background(), Call{Input: []byte(`{"plan":"again"}`), Env: env}); !r.IsError {
		t.Fatal("leaving plan mode twice succeeded")
	}
	if r := tool.Run(context.Background(), Call{Input: []byte(`{"plan":"  "}`), Env: env}); !r.IsError {
		t.Fatal("empty plan accepted")
	}
}

func TestFileChangesAreCheckpointed(t *testing.T) {
	dir := t.TempDir()
	env := NewEnv(dir)
	var events []string
	env.BeforeChange = func(abs string) error {
		data, err := os.ReadFile(abs)
		events = append(events, "before:"+filepath.Base(abs)+":"+string(data)+":"+errText(err))
		return nil
	}
	env.AfterChange = func(abs string) { events = append(events, "after:"+filepath.Base(abs)) }
	ctx := context.Background()
	p := filepath.Join(dir, "a.txt")
	if r := NewWrite().Run(ctx, Call{Input: []byte(`{"file_path":"` + p + `","content":"one\n"}`), Env: env}); r.IsError {
		t.Fatal(r.Text())
	}
	if r := NewEdit().Run(ctx, Call{Input: []byte(`{"file_path":"` + p + `","old_string":"one","new_string":"two"}`), Env: env}); r.IsError {
		t.Fatal(r.Text())
	}
	want := "before:a.txt::missing after:a.txt before:a.txt:one\n: after:a.txt"
	if got := strings.Join(events, " "); got != want {
		t.Fatalf("events:\n got %q\nwant %q", got, want)
	}
	env.BeforeChange = func(string) error { return errors.New("disk full") }
	r := NewEdit().Run(ctx, Call{Input: []byte(`{"file_path":"` + p + `","old_string":"two","new_string":"three"}`), Env: env})
	if !r.IsError || !strings.Contains(r.Text(), "disk full") {
		t.Fatalf("failed checkpoint did not stop the edit: %s", r.Text())
	}
	if data, _ := os.ReadFile(p); string(data) != "two\n" {
		t.Fatalf("file changed without a checkpoint: %q", data)
	}
}

func errText(err error) string {
	if err != nil {
		return "missing"
	}
	return ""
}
