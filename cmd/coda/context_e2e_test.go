package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/coda-cli/coda/internal/llm/llmtest"
)

// The long-session scenario: 300 model turns of large Bash and Read
// outputs against a 100,000-token window. The conversation must be
// compacted again and again without a request ever exceeding the window,
// without losing the user's request or breaking a tool pair, while the
// prompt cache keeps serving most of the input.

const (
	longTurns      = 300
	longWindow     = 100000
	originalPrompt = "ORIGINAL-REQUEST: refactor the parser package and keep the tests green"
)

// isSummaryRequest recognises the compaction request: tool use forbidden,
// and the summary prompt.
func isSummaryRequest(body []byte) bool {
	return bytes.Contains(body, []byte(`"tool_choice":{"type":"none"`)) ||
		bytes.Contains(body, []byte("Your task is to write a detailed summary of the conversation so far"))
}

// longSession scripts the model: each turn thinks aloud and calls Bash or
// Read; a summary request gets a summary that, as the prompt asks, quotes
// the user's messages it can see. Every request body also goes to a
// checker running beside the session, so the heavy JSON work overlaps
// with coda's own.
type longSession struct {
	dir    string
	bodies chan []byte

	mu        sync.Mutex
	turns     int
	lastCall  string // id of the newest tool call
	summaries int
	problems  []string
}

func (s *longSession) answer(r *llmtest.Request) llmtest.Turn {
	s.bodies <- r.Body
	s.mu.Lock()
	defer s.mu.Unlock()
	if isSummaryRequest(r.Body) {
		s.summaries++
		if !bytes.Contains(r.Body, []byte(originalPrompt)) {
			s.problems = append(s.problems, fmt.Sprintf("summary request %d lacks the user's request", s.summaries))
		}
		return llmtest.Reply(llmtest.Text(fmt.Sprintf(
			"<analysis>Going through the conversation.</analysis>\n<summary>\nSUMMARY-%d\n6. All user messages:\n- %s\n8. Current work: turn %d of the refactoring.\n</summary>",
			s.summaries, originalPrompt, s.turns)))
	}
	if s.lastCall != "" && !bytes.Contains(r.Body, []byte(`"tool_use_id":"`+s.lastCall+`"`)) {
		s.problems = append(s.problems, fmt.Sprintf("turn %d: the request lacks the result of the newest call %s", s.turns, s.lastCall))
	}
	s.turns++
	s.lastCall = fmt.Sprintf("toolu_turn%03d", s.turns)
	if s.turns >= longTurns {
		return llmtest.Reply(llmtest.Text("All done."))
	}
	talk := llmtest.Text(fmt.Sprintf("Turn %d. ", s.turns) + strings.Repeat("Looking at the output and deciding what to do next. ", 12))
	var call llmtest.Block
	switch {
	case s.turns%25 == 0:
		// 170 KB, over the 25,000-token limit of one result: it goes to disk.
		call = llmtest.ToolCall(s.lastCall, "Read", input(map[string]any{"file_path": filepath.Join(s.dir, "data", "big.txt")}))
	case s.turns%2 == 0:
		call = llmtest.ToolCall(s.lastCall, "Bash", input(map[string]any{"command": fmt.Sprintf("seq -s ' ' %d %d", s.turns*10000, s.turns*10000+1400)}))
	default:
		file := filepath.Join(s.dir, "src", fmt.Sprintf("part%02d.go", s.turns%20))
		call = llmtest.ToolCall(s.lastCall, "Read", input(map[string]any{"file_path": file}))
	}
	return llmtest.Reply(talk, call)
}

// requestKind is what the checker learned about one request.
type requestKind int

const (
	plainRequest   requestKind = iota // extends the previous request: the cache can serve it
	summaryRequest                    // the compaction's own request
	afterSummary                      // the conversation restarted from a summary
	afterMicro                        // old tool results were cleared
)

// checkRequests reads the bodies in order and classifies each request.
// After a summary, the summary must lead the conversation and the project
// instructions must be back. (The script checks that the newest tool
// result is always there.)
func checkRequests(bodies <-chan []byte, kinds *[]requestKind, problems *[]string) {
	var prev [][]byte
	summaries := 0
	pending := false
	for body := range bodies {
		i := len(*kinds)
		if isSummaryRequest(body) {
			summaries++
			pending = true
			*kinds = append(*kinds, summaryRequest)
			continue
		}
		msgs, err := splitMessages(body)
		if err != nil {
			*problems = append(*problems, fmt.Sprintf("request %d: %v", i, err))
			*kinds = append(*kinds, plainRequest)
			continue
		}
		rewritten := prev != nil && !extends(msgs, prev)
		kind := plainRequest
		switch {
		case pending && !rewritten:
			*problems = append(*problems, fmt.Sprintf("request %d: a summary was written but the conversation did not change", i))
		case pending:
			kind = afterSummary
			first := string(msgs[0])
			if !strings.Contains(first, fmt.Sprintf("SUMMARY-%d", summaries)) || !strings.Contains(first, "PROJECT-RULE") {
				*problems = append(*problems, fmt.Sprintf("request %d: the first message lacks summary %d or the instructions: %.300s", i, summaries, first))
			}
		case rewritten:
			kind = afterMicro
		}
		*kinds = append(*kinds, kind)
		pending = false
		prev = msgs
	}
}

// splitMessages returns the raw messages of an Anthropic request body.
// Parsing 300 bodies of 200 KB with encoding/json under the race detector
// would cost more than the session itself, so it cuts the "messages" array
// at its message boundaries as the SDK writes them ({"content":[...],
// "role":...}), and checks the cut with a full parse now and then.
func splitMessages(body []byte) ([][]byte, error) {
	const open, close, sep = `"messages":[{"content":[`, `}],"model":`, `},{"content":[`
	start := bytes.Index(body, []byte(open))
	end := bytes.LastIndex(body, []byte(close))
	if start < 0 || end < start {
		return nil, fmt.Errorf("no messages array where the SDK writes it: %.200s", body)
	}
	msgs := bytes.Split(body[start+len(open):end], []byte(sep))
	if len(body)%16 == 0 {
		var req struct {
			Messages []json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) != len(msgs) {
			return nil, fmt.Errorf("cut the messages into %d pieces, the JSON has %d (%v)", len(msgs), len(req.Messages), err)
		}
	}
	return msgs, nil
}

func TestLongSessionCompaction(t *testing.T) {
	if testing.Short() {
		t.Skip("long scenario")
	}
	files := map[string]string{
		"AGENTS.md":    "PROJECT-RULE: run the tests after each change.\n",
		"data/big.txt": strings.Repeat(strings.Repeat("0123456789", 8)+"\n", 2000),
	}
	for i := range 20 {
		var b strings.Builder
		fmt.Fprintf(&b, "package parser\n\n// part %d\n", i)
		for j := 0; b.Len() < 6000; j++ {
			fmt.Fprintf(&b, "var table%d_%d = []int{", i, j)
			for k := 0; k < 60; k++ {
				fmt.Fprintf(&b, "%d, ", i*1000+j*60+k)
			}
			b.WriteString("}\n")
		}
		files[fmt.Sprintf("src/part%02d.go", i)] = b.String()
	}
	dir := project(t, files)
	home := t.TempDir()
	settings := fmt.Sprintf(`{"models":{"anthropic/claude-test":{"contextWindow":%d,"maxOutputTokens":8192}}}`, longWindow)
	if err := os.MkdirAll(filepath.Join(home, ".coda"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".coda", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}

	srv := llmtest.NewServer(t)
	srv.SetContextWindow(longWindow)
	script := &longSession{dir: dir, bodies: make(chan []byte, 4*longTurns)}
	var kinds []requestKind
	var problems []string
	checked := make(chan struct{})
	go func() {
		defer close(checked)
		checkRequests(script.bodies, &kinds, &problems)
	}()
	stopChecking := sync.OnceFunc(func() { close(script.bodies); <-checked })
	t.Cleanup(stopChecking)
	srv.SetHandler(script.answer)
	r := coda(t, srv, dir, []string{"HOME=" + home}, "-p", originalPrompt, "--output-format", "stream-json", "--verbose",
		"--model", "anthropic/claude-test", "--max-turns", "400", "--permission-mode", "bypassPermissions")
	stopChecking()

	// stream-json: one compact_boundary line per summary, the result last.
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	boundaries := 0
	for _, l := range lines {
		if strings.Contains(l, `"subtype":"compact_boundary"`) && strings.Contains(l, `"trigger":"auto"`) {
			boundaries++
		}
	}
	r.stdout = lines[len(lines)-1]
	res := parseResult(t, r)
	if r.code != 0 || res.Subtype != "success" || res.Result != "All done." || res.NumTurns != longTurns {
		t.Fatalf("exit %d, result %+v\nstderr: %s", r.code, res, r.stderr)
	}
	noRejections(t, srv)
	for _, p := range append(script.problems, problems...) {
		t.Error(p)
	}
	reqs := srv.Requests()
	if len(reqs) != len(kinds) {
		t.Fatalf("%d requests, %d checked", len(reqs), len(kinds))
	}

	// Cache reads over input, leaving out the first request and each
	// request right after a compaction: nothing can be cached for those.
	var input, read, biggest int
	count := map[requestKind]int{}
	for i, req := range reqs {
		if req.Rejected != "" {
			t.Fatalf("request %d refused: %s", i, req.Rejected)
		}
		u := req.Usage
		total := u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
		biggest = max(biggest, total)
		count[kinds[i]]++
		if i == 0 || kinds[i] == afterSummary || kinds[i] == afterMicro {
			continue
		}
		input += total
		read += u.CacheReadInputTokens
	}
	ratio := float64(read) / float64(input)
	t.Logf("%d requests: %d summaries, %d micro-compactions; largest request %d tokens; cache reads %.1f%% of input",
		len(reqs), count[summaryRequest], count[afterMicro], biggest, 100*ratio)
	if count[summaryRequest] < 2 || count[afterSummary] != count[summaryRequest] {
		t.Errorf("%d summary requests, %d conversations restarted from one; the scenario should compact fully several times",
			count[summaryRequest], count[afterSummary])
	}
	if boundaries != count[summaryRequest] {
		t.Errorf("%d compact_boundary lines in stream-json for %d summaries", boundaries, count[summaryRequest])
	}
	if biggest > longWindow {
		t.Errorf("a request carried %d tokens, over the %d window", biggest, longWindow)
	}
	if ratio < 0.90 {
		t.Errorf("cache reads are %.1f%% of input tokens, want at least 90%%", 100*ratio)
	}
	if !bytes.Contains(reqs[0].Body, []byte("PROJECT-RULE")) || strings.Contains(reqs[0].System(), "PROJECT-RULE") {
		t.Error("AGENTS.md must ride on the first user message, not in the system prompt")
	}
	var persisted []string
	filepath.WalkDir(filepath.Join(home, ".coda"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Base(filepath.Dir(p)) == "tool-results" {
			persisted = append(persisted, p)
		}
		return nil
	})
	if len(persisted) == 0 {
		t.Error("no tool result was persisted under ~/.coda")
	}
}

// extends reports whether msgs starts with every message of prev but its
// last (whose cache marker moves on), byte for byte.
func extends(msgs, prev [][]byte) bool {
	if len(msgs) < len(prev) {
		return false
	}
	for i := 0; i < len(prev)-1; i++ {
		if !bytes.Equal(msgs[i], prev[i]) {
			return false
		}
	}
	return true
}

// A prompt-too-long answer compacts once and retries the same request; a
// second one in a row ends the run with an error that says what to do.
func TestPromptTooLongCompactsAndRetries(t *testing.T) {
	summary := llmtest.Reply(llmtest.Text("<analysis>short</analysis><summary>The user asked: PTL-PROMPT</summary>"))
	t.Run("recovers", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		dir := project(t, map[string]string{"AGENTS.md": "PTL-RULE\n"})
		srv.Enqueue(llmtest.PromptTooLong(), summary, llmtest.Reply(llmtest.Text("answered after compaction")))
		r := coda(t, srv, dir, nil, "-p", "PTL-PROMPT", "--output-format", "json")
		res := parseResult(t, r)
		if r.code != 0 || res.Result != "answered after compaction" {
			t.Fatalf("exit %d, result %+v, stderr %s", r.code, res, r.stderr)
		}
		reqs := srv.Requests()
		if len(reqs) != 3 || !isSummaryRequest(reqs[1].Body) || isSummaryRequest(reqs[2].Body) {
			t.Fatalf("%d requests; want the refused one, the summary request, the retry", len(reqs))
		}
		retry := string(reqs[2].Body)
		if !strings.Contains(retry, "The user asked: PTL-PROMPT") || !strings.Contains(retry, "PTL-RULE") {
			t.Errorf("the retry lacks the summary or the project instructions: %.500s", retry)
		}
		noRejections(t, srv)
	})
	t.Run("gives up", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		dir := project(t, map[string]string{"a.txt": "a"})
		srv.Enqueue(llmtest.PromptTooLong(), summary, llmtest.PromptTooLong())
		r := coda(t, srv, dir, nil, "-p", "PTL-PROMPT", "--output-format", "json")
		res := parseResult(t, r)
		if r.code == 0 || !res.IsError || !strings.Contains(strings.Join(res.Errors, " "), "context window") {
			t.Fatalf("exit %d, result %+v", r.code, res)
		}
		if n := len(srv.Requests()); n != 3 {
			t.Fatalf("%d requests, want 3: no second compaction", n)
		}
	})
}
