package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coda-cli/coda/internal/llm/llmtest"
)

// transcripts lists the session files under home for any project.
func transcripts(t *testing.T, home string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(home, ".coda", "projects", "*", "sessions", "*.jsonl"))
	return files
}

func TestResumeContinueAndFork(t *testing.T) {
	srv := llmtest.NewServer(t)
	dir := project(t, map[string]string{"a.txt": "a\n"})
	home := t.TempDir()
	env := []string{"HOME=" + home}
	srv.Enqueue(llmtest.Reply(llmtest.Text("first answer")))
	r := coda(t, srv, dir, env, "-p", "remember the word pelican", "--output-format", "json")
	id := parseResult(t, r).SessionID
	if files := transcripts(t, home); len(files) != 1 || !strings.Contains(files[0], id) {
		t.Fatalf("transcripts %v for session %s", files, id)
	}
	for _, f := range transcripts(t, home) {
		if strings.HasPrefix(f, dir) {
			t.Fatalf("transcript inside the repository: %s", f)
		}
	}

	srv.Enqueue(llmtest.Reply(llmtest.Text("second answer")))
	r = coda(t, srv, dir, env, "-p", "what was the word?", "--output-format", "json", "--resume", id)
	if res := parseResult(t, r); res.SessionID != id || res.Subtype != "success" {
		t.Fatalf("resume: %+v %s", res, r.stderr)
	}
	if body := string(srv.Requests()[1].Body); !strings.Contains(body, "pelican") || !strings.Contains(body, "first answer") {
		t.Fatalf("resumed request lacks the earlier conversation")
	}

	srv.Enqueue(llmtest.Reply(llmtest.Text("third answer")))
	r = coda(t, srv, dir, env, "-p", "and again?", "--output-format", "json", "--continue")
	if res := parseResult(t, r); res.SessionID != id {
		t.Fatalf("--continue picked %s, want %s", res.SessionID, id)
	}
	if body := string(srv.Requests()[2].Body); !strings.Contains(body, "second answer") {
		t.Fatal("--continue lost the previous turn")
	}

	before, _ := os.ReadFile(transcripts(t, home)[0])
	srv.Enqueue(llmtest.Reply(llmtest.Text("forked answer")))
	r = coda(t, srv, dir, env, "-p", "fork it", "--output-format", "json", "--resume", id, "--fork-session")
	forked := parseResult(t, r).SessionID
	if forked == id || forked == "" {
		t.Fatalf("fork kept id %s", forked)
	}
	after, _ := os.ReadFile(filepath.Join(filepath.Dir(transcripts(t, home)[0]), id+".jsonl"))
	if string(before) != string(after) {
		t.Fatal("forking changed the original transcript")
	}
	if body := string(srv.Requests()[3].Body); !strings.Contains(body, "third answer") {
		t.Fatal("fork lost the conversation")
	}

	r = coda(t, nil, dir, env, "sessions")
	if r.code != 0 || !strings.Contains(r.stdout, id) || !strings.Contains(r.stdout, forked) || !strings.Contains(r.stdout, "remember the word pelican") {
		t.Fatalf("coda sessions: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = coda(t, nil, dir, env, "sessions", "rm", forked)
	if r.code != 0 {
		t.Fatalf("sessions rm: %s", r.stderr)
	}
	if r = coda(t, nil, dir, env, "sessions"); strings.Contains(r.stdout, forked) {
		t.Fatal("removed session still listed")
	}
	noRejections(t, srv)
}

// TestKillNineAndResume kills the binary at random points of a running
// session, many times; every resume must succeed and be accepted by the
// fake's validator, and nothing completed before the kill may be lost.
func TestKillNineAndResume(t *testing.T) {
	srv := llmtest.NewServer(t)
	dir := project(t, map[string]string{"a.txt": "a\n"})
	home := t.TempDir()
	var step atomic.Int64
	resumeTurn := atomic.Bool{}
	srv.SetHandler(func(r *llmtest.Request) llmtest.Turn {
		if resumeTurn.Load() {
			return llmtest.Reply(llmtest.Text("resumed fine"))
		}
		n := step.Add(1)
		return llmtest.Reply(llmtest.Text(fmt.Sprintf("marker-%d", n)),
			llmtest.ToolCall("", "Bash", input(map[string]any{"command": fmt.Sprintf("echo out-%d", n)}))).WithDelay(15 * time.Millisecond)
	})
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 8 {
		resumeTurn.Store(false)
		args := []string{"-p", fmt.Sprintf("work round %d", i), "--output-format", "json", "--permission-mode", "bypassPermissions"}
		if i > 0 {
			args = append(args, "--continue")
		}
		cmd := exec.Command(codaBin, args...)
		cmd.Dir = dir
		cmd.Env = baseEnv(t, srv, []string{"HOME=" + home})
		before := len(srv.Requests())
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill mid-turn: once the run is talking to the model (start-up
		// time varies with the machine's load), at a random point.
		for deadline := time.Now().Add(20 * time.Second); len(srv.Requests()) == before && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(time.Duration(rng.IntN(600)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()

		files := transcripts(t, home)
		if len(files) != 1 {
			t.Fatalf("round %d: %d transcripts", i, len(files))
		}
		recorded := assistantMarkers(t, files[0])

		resumeTurn.Store(true)
		first := len(srv.Requests())
		r := coda(t, srv, dir, []string{"HOME=" + home}, "-p", "are you there?", "--output-format", "json", "--continue")
		if res := parseResult(t, r); res.Subtype != "success" || res.Result != "resumed fine" {
			t.Fatalf("round %d: resume failed: %+v\n%s", i, res, r.stderr)
		}
		body := string(srv.Requests()[first].Body)
		// The newest answer may be cut back if its tool results were not
		// written before the kill; everything before it must be there.
		for j, m := range recorded {
			if j < len(recorded)-1 && !strings.Contains(body, m) {
				t.Fatalf("round %d: %s was recorded but is missing after resume", i, m)
			}
		}
		noRejections(t, srv)
	}
}

// assistantMarkers lists the marker texts of assistant messages in a
// transcript, in order.
func assistantMarkers(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var rec struct {
			Type    string `json:"type"`
			Message struct {
				Role    string `json:"role"`
				Content []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) != nil || rec.Type != "message" || rec.Message.Role != "assistant" {
			continue
		}
		for _, c := range rec.Message.Content {
			if strings.HasPrefix(c.Text, "marker-") {
				out = append(out, c.Text)
			}
		}
	}
	return out
}

func TestClearStartsOverInTheTranscript(t *testing.T) {
	srv := llmtest.NewServer(t)
	dir := project(t, map[string]string{"AGENTS.md": "Always answer in haiku.\n"})
	home := t.TempDir()
	env := []string{"HOME=" + home}
	srv.Enqueue(llmtest.Reply(llmtest.Text("first")))
	coda(t, srv, dir, env, "-p", "the secret is walrus", "--output-format", "json")
	if r := coda(t, srv, dir, env, "-p", "/clear", "--continue"); r.code != 0 {
		t.Fatalf("/clear: %d %s", r.code, r.stderr)
	}
	srv.Enqueue(llmtest.Reply(llmtest.Text("second")))
	coda(t, srv, dir, env, "-p", "what is the secret?", "--output-format", "json", "--continue")
	body := string(srv.Requests()[1].Body)
	if strings.Contains(body, "walrus") {
		t.Fatal("the cleared conversation came back on resume")
	}
	if !strings.Contains(body, "Always answer in haiku.") {
		t.Fatal("project instructions not sent again after /clear")
	}
}

func TestResumeDoesNotRepeatInstructions(t *testing.T) {
	srv := llmtest.NewServer(t)
	dir := project(t, map[string]string{"AGENTS.md": "UNIQUE-RULE-7431: use tabs.\n"})
	home := t.TempDir()
	env := []string{"HOME=" + home}
	srv.Enqueue(llmtest.Reply(llmtest.Text("one")), llmtest.Reply(llmtest.Text("two")), llmtest.Reply(llmtest.Text("three")))
	coda(t, srv, dir, env, "-p", "first", "--output-format", "json")
	coda(t, srv, dir, env, "-p", "second", "--output-format", "json", "--continue")
	if n := strings.Count(string(srv.Requests()[1].Body), "UNIQUE-RULE-7431"); n != 1 {
		t.Fatalf("instructions appear %d times after resume, want 1", n)
	}
	// Changed instructions are sent again.
	os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte("UNIQUE-RULE-7431: use spaces now.\n"), 0o644)
	coda(t, srv, dir, env, "-p", "third", "--output-format", "json", "--continue")
	if !strings.Contains(string(srv.Requests()[2].Body), "use spaces now") {
		t.Fatal("changed instructions not sent on resume")
	}
}
