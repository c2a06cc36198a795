package session

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/coda-cli/coda/internal/llm"
)

// decodeCorpus is lines of every shape the fast decoder must either read
// exactly as encoding/json does or hand back.
func decodeCorpus(t testing.TB) [][]byte {
	at := time.Date(2026, 5, 6, 7, 8, 9, 123456789, time.FixedZone("x", 3600))
	usage := &llm.Usage{InputTokens: 1, OutputTokens: -2, CacheCreationInputTokens: 3, CacheReadInputTokens: 1 << 40}
	msgs := []llm.Message{
		{ID: "m1", Role: llm.RoleUser, Blocks: []llm.Block{
			llm.Text{Text: "plain"},
			llm.Text{Text: "esc \" \\ / \b \f \n \r \t \x00 \x1f <a&b> \u2028\u2029 é 😀 ✓"},
			llm.Image{MediaType: "image/png", Data: "AAAA"},
		}, Meta: llm.Meta{Time: at, Reminder: true}},
		{ID: "m2", Role: llm.RoleAssistant, Blocks: []llm.Block{
			llm.Thinking{Thinking: "hmm", Signature: "sig"},
			llm.RedactedThinking{Data: "xyz"},
			llm.ToolUse{ID: "t1", Name: "Write", Input: json.RawMessage(`{"path":"a]}\"{[","n":[1,2.5e3,{"x":null}],"b":true}`)},
			llm.ToolUse{ID: "t2", Name: "Empty"},
		}, Meta: llm.Meta{Model: "m", Usage: usage, Status: llm.StatusComplete, StopReason: llm.StopToolUse}},
		{ID: "m3", Role: llm.RoleUser, Blocks: []llm.Block{
			llm.ToolResult{ToolUseID: "t1", Content: []llm.Block{llm.Text{Text: "ok"}, llm.Image{MediaType: "image/gif", Data: "R0"}}},
			llm.ToolResult{ToolUseID: "t2", IsError: true},
		}},
		{Role: llm.RoleAssistant},
	}
	var lines [][]byte
	add := func(rec Record) {
		var buf bytes.Buffer
		if err := encodeRecord(&buf, rec); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	}
	for i := range msgs {
		add(Record{Type: TypeMessage, Time: at, Message: &msgs[i]})
	}
	add(Record{Type: TypeUsage, Usage: usage})
	add(Record{Type: TypeModel, Model: "a/b"})
	add(Record{Type: TypeTitle, Title: "t"})
	add(Record{Type: TypeMode, Mode: "plan"})
	add(Record{Type: TypeCompact, Compact: &Compact{Messages: msgs[:2]}})
	add(Record{Type: TypeCheckpoint, Checkpoint: &Checkpoint{Prompt: "p", Path: "/x", Before: Absent}})
	for _, s := range []string{
		`{"type":"message","ts":"2026-01-01T00:00:00Z","message":{"id":"a","role":"user","content":[{"type":"text","text":"\ud83d\ude00 \u00e9 \u0041"}],"meta":{}}}`,
		`{"type":"message","message":{"content":[{"type":"text","text":"lone \ud83d here"}]}}`,
		`{"type":"message","message":{"content":[{"type":"text","text":"low first \ude00\ud83d"}]}}`,
		`{"type":"message","message":{"content":[{"type":"text","text":"bad utf8 ` + "\xff\xfe" + `"}]}}`,
		`{"type":"message","message":{"content":[{"type":"text","text":"bad utf8 and escape ` + "\xc3" + `\n"}]}}`,
		`{"type":"message","message":{"content":[{"type":"text","text":"bad escape \x"}]}}`,
		`{"type":"message","message":{"content":[{"type":"text","text":"squote \'"}]}}`,
		`{"type":"message","message":{"content":[{"type":"text","text":"raw control ` + "\t" + `"}]}}`,
		`{"type":"message","Type":"usage"}`,
		`{"type":"message","type":"usage"}`,
		`{"TYPE":"message"}`,
		`{"type":null,"ts":null,"message":null}`,
		`{"type":"usage","usage":{"input_tokens":1.0}}`,
		`{"type":"usage","usage":{"input_tokens":1e3}}`,
		`{"type":"usage","usage":{"input_tokens":-0}}`,
		`{"type":"usage","usage":{"input_tokens":012}}`,
		`{"type":"usage","usage":{"input_tokens":99999999999999999999}}`,
		`{"type":"usage","usage":{"input_tokens":"1"}}`,
		`{"type":"usage","usage":{"input_tokens":1,"input_tokens":2}}`,
		` { "type" : "usage" , "usage" : { "output_tokens" : 7 } } `,
		`{"type":"message","message":{"meta":{"reminder":truex}}}`,
		`{"type":"message","message":{"meta":{"reminder":"true"}}}`,
		`{"type":"message","message":{"meta":{"time":"not a time"}}}`,
		`{"type":"message","message":{"meta":{"future":1}}}`,
		`{"type":"message","message":{"content":[{"type":"tool_use","input":{"a":[1,2}}]}}`,
		`{"type":"message","message":{"content":[{"type":"tool_use","input":{"a":"\"}"}}]}}`,
		`{"type":"message","message":{"content":[{"type":"tool_use","input":5}]}}`,
		`{"type":"message","message":{"content":[{"type":"tool_use","input":"str"}]}}`,
		`{"type":"message","message":{"content":[{"type":"hologram"}]}}`,
		`{"type":"message","message":{"content":[{"type":"text","text":"x","content":[{"type":"hologram"}]}]}}`,
		`{"type":"message","message":{"content":[{"type":"tool_result","content":[]}]}}`,
		`{"type":"message","message":{"content":[]}}`,
		`{"type":"message","message":{}}`,
		`{"type":"message","message":{"id":"a"}} trailing`,
		`{"type":"message","message":{"id":"a"},}`,
		`{"type":"message",}`,
		`{}`, `[]`, `"x"`, ``, `{`, `{"type"}`,
	} {
		lines = append(lines, []byte(s))
	}
	// Every prefix of a rich line: how a crash cuts one short.
	full := lines[1]
	for i := range full {
		lines = append(lines, full[:i])
	}
	return lines
}

// checkFastDecode fails when the fast decoder accepts a line and reads it
// differently from encoding/json, or accepts what encoding/json rejects.
func checkFastDecode(t testing.TB, line []byte) {
	var fast, std Record
	if !fastDecodeRecord(line, &fast) {
		return
	}
	if err := decodeRecordStd(line, &std); err != nil {
		t.Fatalf("fast decoder accepted what encoding/json rejects (%v): %q", err, line)
	}
	if !reflect.DeepEqual(fast, std) {
		t.Fatalf("fast decoder disagrees on %q\nfast %#v\nstd  %#v", line, fast, std)
	}
}

func TestFastDecodeAgreesWithEncodingJSON(t *testing.T) {
	accepted := 0
	for _, line := range decodeCorpus(t) {
		checkFastDecode(t, line)
		var r Record
		if fastDecodeRecord(line, &r) {
			accepted++
		}
	}
	// The lines coda writes for messages and usage take the fast path.
	if accepted < 8 {
		t.Errorf("fast decoder accepted only %d lines of the corpus", accepted)
	}
	var r Record
	line := decodeCorpus(t)[1]
	if !fastDecodeRecord(line, &r) || len(r.Message.Blocks) != 4 {
		t.Errorf("fast decoder gave up on a line coda writes: %s", line)
	}
}

func FuzzFastDecode(f *testing.F) {
	for _, line := range decodeCorpus(f) {
		f.Add(line)
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		checkFastDecode(t, line)
	})
}

// TestWireCoversLLMTypes holds the session's decoders to llm's types: a
// field added there must be read here too, or resumed sessions would lose
// it silently.
func TestWireCoversLLMTypes(t *testing.T) {
	tags := func(v any) []string {
		var out []string
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			if name != "" && name != "-" {
				out = append(out, name)
			}
		}
		sort.Strings(out)
		return out
	}
	wire := map[string]bool{}
	for _, name := range tags(wireBlock{}) {
		wire[name] = true
	}
	for _, b := range []llm.Block{llm.Text{}, llm.Thinking{}, llm.RedactedThinking{}, llm.ToolUse{}, llm.ToolResult{}, llm.Image{}} {
		for _, name := range tags(b) {
			if !wire[name] {
				t.Errorf("llm.%T field %q is not read back by wireBlock", b, name)
			}
		}
	}
	// The fast decoder knows these keys; anything else sends a line to
	// encoding/json, correct but slow.
	if got, want := strings.Join(tags(llm.Meta{}), " "), "model reminder status stop_reason time usage"; got != want {
		t.Errorf("llm.Meta keys are %q; fastdecode.go knows %q", got, want)
	}
	if got, want := strings.Join(tags(llm.Usage{}), " "), "cache_creation_input_tokens cache_read_input_tokens input_tokens output_tokens"; got != want {
		t.Errorf("llm.Usage keys are %q; fastdecode.go knows %q", got, want)
	}
	if got, want := strings.Join(tags(llm.Message{}), " "), "content id meta role"; got != want {
		t.Errorf("llm.Message keys are %q; fastdecode.go knows %q", got, want)
	}
}
