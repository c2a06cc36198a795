package app

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coda-cli/coda/internal/llm"
	"github.com/coda-cli/coda/internal/session"
)

func TestAskTrustReadsOneAnswer(t *testing.T) {
	widening := []string{"allow Bash(npm run *) (/p/.coda/settings.json)", "sandbox disabled (/p/.coda/settings.json)"}
	for answer, want := range map[string]bool{
		"y\n": true, "YES\r\n": true, " yes \n": true,
		"\n": false, "n\n": false, "sure\n": false, "": false, "y": true,
	} {
		var out strings.Builder
		got := askTrust(strings.NewReader(answer), &out)("/p", widening)
		if got != want {
			t.Errorf("answer %q trusted = %v, want %v", answer, got, want)
		}
		text := out.String()
		for _, line := range []string{"coda is starting in /p.", "This folder's settings would allow:",
			"  - allow Bash(npm run *) (/p/.coda/settings.json)", "  - sandbox disabled", "Trust this folder? [y/N] "} {
			if !strings.Contains(text, line) {
				t.Errorf("the question lacks %q:\n%s", line, text)
			}
		}
		if !want && !strings.Contains(text, "Not trusted") {
			t.Errorf("answer %q: no word that the folder is not trusted:\n%s", answer, text)
		}
	}
}

func TestAskTrustLeavesTheRestOfTheInput(t *testing.T) {
	in := strings.NewReader("y\nfirst prompt\n")
	if !askTrust(in, io.Discard)("/p", []string{"allow Bash"}) {
		t.Fatal("not trusted")
	}
	rest, _ := io.ReadAll(in)
	if string(rest) != "first prompt\n" {
		t.Errorf("the question took %q from the input", "y\nfirst prompt\n"[:len("y\nfirst prompt\n")-len(rest)])
	}
}

func TestPickSessionListsThisProjectsSessions(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	store := session.NewStore(home, dir)
	var ids []string
	for _, prompt := range []string{"add the parser", "write the docs"} {
		s, err := store.Create()
		if err != nil {
			t.Fatal(err)
		}
		m := llm.UserText(prompt)
		m.ID = "msg_" + strings.ReplaceAll(prompt, " ", "_")
		if err := s.AppendMessage(m); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID())
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut strings.Builder
	o := Options{Cwd: dir, Home: home, Stdin: strings.NewReader("2\n"), Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }}
	id, err := pickSession(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Resume a session", "add the parser", "write the docs", "1 message"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the list lacks %q:\n%s", want, out.String())
		}
	}
	// The id returned is the one of the second line's session.
	want := ids[1]
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "  2. add the parser") {
			want = ids[0]
		}
	}
	if id != want {
		t.Fatalf("picked %q, want %q; the list:\n%s", id, want, out.String())
	}

	o.Stdin = strings.NewReader("\n")
	if id, err := pickSession(context.Background(), o); id != "" || err != nil || !strings.Contains(errOut.String(), "no session chosen") {
		t.Errorf("cancelled: %q, %v, %q", id, err, errOut.String())
	}
	o.Cwd = t.TempDir()
	errOut.Reset()
	if id, err := pickSession(context.Background(), o); id != "" || err != nil || !strings.Contains(errOut.String(), "no session to resume") {
		t.Errorf("no sessions: %q, %v, %q", id, err, errOut.String())
	}
}
