package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/coda-cli/coda/internal/llm"
)

// Loaded is a transcript read back into a conversation.
type Loaded struct {
	// Messages is the conversation to continue: compaction boundaries and
	// rewinds applied, cut back to the last point where every tool_use has
	// its tool_result.
	Messages []llm.Message
	// Skipped counts lines that could not be parsed (a write cut short by
	// a crash, garbage); they are left in the file and ignored.
	Skipped int
	// Dropped counts messages cut from the end because a tool_use there
	// never got its result.
	Dropped int
	// Unknown counts records of types this version does not know (written
	// by a newer coda); they stay in the file.
	Unknown int

	LastActivity time.Time
	// Title is the newest title record, else the first user prompt
	// shortened to about 60 characters.
	Title     string
	Model     string
	Mode      string
	GitBranch string
	// Usage sums the usage records of the whole session.
	Usage llm.Usage
}

// checkpointEntry is a checkpoint record and its position in the file.
type checkpointEntry struct {
	seq int
	cp  Checkpoint
}

// summary is what a listing needs of a transcript. It is small and
// serializable, so a listing can keep it in an index and read only what
// was appended since.
type summary struct {
	LastActivity time.Time `json:"last_activity,omitzero"`
	FirstPrompt  string    `json:"first_prompt,omitempty"`
	Title        string    `json:"title,omitempty"`
	GitBranch    string    `json:"git_branch,omitempty"`
	Model        string    `json:"model,omitempty"`
	Mode         string    `json:"mode,omitempty"`
	Usage        llm.Usage `json:"usage"`
	Skipped      int       `json:"skipped,omitempty"`
	Unknown      int       `json:"unknown,omitempty"`
	Seq          int       `json:"seq"` // records applied so far
	HasMessages  bool      `json:"has_messages,omitempty"`
	Outline      outline   `json:"outline"`
}

// replay applies records in file order. It is the single place that
// decides what a transcript means; loading, listing, resuming and
// rewinding all go through it.
type replay struct {
	summary
	// A listing keeps neither messages nor checkpoints; a live session
	// keeps checkpoints only.
	noMessages, noCheckpoints bool

	msgs        msgList
	promptSeq   map[string]int // user prompt id -> seq of its message record (last one wins)
	checkpoints []checkpointEntry

	consumed int64 // bytes up to and including the last '\n'
	tail     int   // bytes after the last '\n' (a write cut short)
}

func newReplay() *replay {
	return &replay{promptSeq: make(map[string]int)}
}

// loadFile reads the transcript at path. A missing file is an error; an
// empty one is an empty conversation.
func loadFile(path string) (*replay, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open session: %w", err)
	}
	defer f.Close()
	p := newReplay()
	if err := p.read(f, true); err != nil {
		return nil, fmt.Errorf("read session %s: %w", path, err)
	}
	return p, nil
}

// read applies the records of r. With withTail, bytes after the last
// newline are applied too when they parse (a record is written with its
// newline in one write; bytes without one are a write cut short, unless
// exactly the newline was lost).
func (p *replay) read(r io.Reader, withTail bool) error {
	decoded := make([]decodedLine, 0, 1024)
	consumed, partial, err := readBatches(r, func(lines [][]byte) {
		decoded = decodeLines(lines, decoded[:0])
		for i := range decoded {
			p.applyDecoded(&decoded[i])
			decoded[i] = decodedLine{} // release what the replay did not keep
		}
	})
	if err != nil {
		return err
	}
	p.consumed += consumed
	p.tail = len(partial)
	if withTail && len(partial) > 0 {
		d := decodeLine(partial)
		p.applyDecoded(&d)
	}
	return nil
}

// finish computes the Loaded value: the tool-pairing cut and the title.
func (p *replay) finish() *Loaded {
	msgs := p.msgs.slice()
	keep := closedPrefix(msgs)
	return &Loaded{
		Messages:     msgs[:keep:keep],
		Skipped:      p.Skipped,
		Dropped:      len(msgs) - keep,
		Unknown:      p.Unknown,
		LastActivity: p.LastActivity,
		Title:        p.title(),
		Model:        p.Model,
		Mode:         p.Mode,
		GitBranch:    p.GitBranch,
		Usage:        p.Usage,
	}
}

func (s *summary) title() string {
	if s.Title != "" {
		return s.Title
	}
	return shortTitle(s.FirstPrompt)
}

type decodedLine struct {
	rec     Record
	blank   bool
	bad     bool // unparseable
	unknown bool // parseable, of a type this version does not know
}

func decodeLine(line []byte) decodedLine {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return decodedLine{blank: true}
	}
	var d decodedLine
	if err := decodeRecord(line, &d.rec); err != nil {
		// A newer version's record may reuse a field name with another
		// shape; it is still a record if its type is readable.
		var head struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(line, &head) == nil && head.Type != "" && !knownType(head.Type) {
			return decodedLine{unknown: true}
		}
		return decodedLine{bad: true}
	}
	switch {
	case !knownType(d.rec.Type):
		d.unknown = true
	case !d.rec.complete():
		d.bad = true
	}
	return d
}

func knownType(t string) bool {
	switch t {
	case TypeSession, TypeMessage, TypeUsage, TypeCompact, TypeModel, TypeMode, TypeTitle, TypeCheckpoint, TypeRewind:
		return true
	}
	return false
}

// complete reports whether a known record carries the field its type needs.
func (r *Record) complete() bool {
	switch r.Type {
	case TypeSession:
		return r.Start != nil
	case TypeMessage:
		return r.Message != nil
	case TypeUsage:
		return r.Usage != nil
	case TypeCompact:
		return r.Compact != nil
	case TypeCheckpoint:
		return r.Checkpoint != nil && r.Checkpoint.Path != ""
	case TypeRewind:
		return r.Rewind != nil
	}
	return true
}

// decodeLines decodes a batch in parallel; JSON decoding is the cost of a
// resume and lines are independent. The goroutines end before it returns.
func decodeLines(lines [][]byte, out []decodedLine) []decodedLine {
	if cap(out) < len(lines) {
		out = make([]decodedLine, len(lines))
	}
	out = out[:len(lines)]
	workers := min(runtime.GOMAXPROCS(0), len(lines)/32+1)
	if workers <= 1 {
		for i, l := range lines {
			out[i] = decodeLine(l)
		}
		return out
	}
	var wg sync.WaitGroup
	chunk := (len(lines) + workers - 1) / workers
	for start := 0; start < len(lines); start += chunk {
		end := min(start+chunk, len(lines))
		wg.Go(func() {
			for i := start; i < end; i++ {
				out[i] = decodeLine(lines[i])
			}
		})
	}
	wg.Wait()
	return out
}

func (p *replay) applyDecoded(d *decodedLine) {
	switch {
	case d.blank:
	case d.bad:
		p.Skipped++
	case d.unknown:
		p.Seq++
		p.Unknown++
	default:
		p.apply(&d.rec)
	}
}

func (p *replay) apply(rec *Record) {
	p.Seq++
	if rec.Time.After(p.LastActivity) {
		p.LastActivity = rec.Time
	}
	switch rec.Type {
	case TypeSession:
		p.GitBranch = rec.Start.GitBranch
	case TypeMessage:
		m := *rec.Message
		p.HasMessages = true
		p.Outline.add(m, rec.Time)
		if isPrompt(m) {
			if p.FirstPrompt == "" {
				p.FirstPrompt = typedText(m)
			}
			if m.ID != "" && !p.noCheckpoints {
				p.promptSeq[m.ID] = p.Seq
			}
		}
		if !p.noMessages {
			p.msgs.add(m)
		}
	case TypeCompact:
		p.HasMessages = true
		p.Outline.reset(rec.Compact.Messages, rec.Time)
		if p.FirstPrompt == "" && len(p.Outline.Prompts) > 0 {
			p.FirstPrompt = p.Outline.Prompts[0].Text
		}
		if !p.noMessages {
			p.msgs.reset(rec.Compact.Messages)
		}
	case TypeRewind:
		keep := p.Outline.rewind(*rec.Rewind)
		if !p.noMessages {
			p.msgs.truncate(keep)
		}
	case TypeUsage:
		p.Usage = p.Usage.Add(*rec.Usage)
	case TypeModel:
		p.Model = rec.Model
	case TypeMode:
		p.Mode = rec.Mode
	case TypeTitle:
		p.Title = rec.Title
	case TypeCheckpoint:
		if !p.noCheckpoints {
			p.checkpoints = append(p.checkpoints, checkpointEntry{seq: p.Seq, cp: *rec.Checkpoint})
		}
	}
}

// msgChunk is how many messages a msgList chunk holds.
const msgChunk = 4096

// msgList is the conversation while a replay builds it. It grows in
// chunks: a long transcript appended to one slice would copy it, and have
// the collector scan each abandoned copy, at every doubling.
type msgList struct {
	chunks [][]llm.Message // all full but the last
	n      int
}

func (l *msgList) add(m llm.Message) {
	if k := len(l.chunks); k == 0 || len(l.chunks[k-1]) == msgChunk {
		l.chunks = append(l.chunks, make([]llm.Message, 0, msgChunk))
	}
	last := &l.chunks[len(l.chunks)-1]
	*last = append(*last, m)
	l.n++
}

func (l *msgList) truncate(n int) {
	if n >= l.n {
		return
	}
	n = max(n, 0)
	k := (n + msgChunk - 1) / msgChunk
	clear(l.chunks[k:])
	l.chunks = l.chunks[:k]
	if k > 0 {
		l.chunks[k-1] = l.chunks[k-1][:n-(k-1)*msgChunk]
	}
	l.n = n
}

func (l *msgList) reset(msgs []llm.Message) {
	l.chunks, l.n = nil, 0
	for _, m := range msgs {
		l.add(m)
	}
}

func (l *msgList) len() int { return l.n }

// slice returns the messages in one new slice.
func (l *msgList) slice() []llm.Message {
	out := make([]llm.Message, 0, l.n)
	for _, c := range l.chunks {
		out = append(out, c...)
	}
	return out
}

// closedPrefix is the length of the longest prefix of msgs after which no
// tool_use is waiting for its result: the point a provider accepts and the
// loop can continue from.
func closedPrefix(msgs []llm.Message) int {
	pending := make(map[string]bool)
	keep := 0
	for i, m := range msgs {
		for _, b := range m.Blocks {
			switch b := b.(type) {
			case llm.ToolUse:
				pending[b.ID] = true
			case llm.ToolResult:
				delete(pending, b.ToolUseID)
			}
		}
		if len(pending) == 0 {
			keep = i + 1
		}
	}
	return keep
}

// readBatchSize bounds the memory a load holds besides the conversation.
const readBatchSize = 4 << 20

// readBatches calls each with the complete lines of r, a batch at a time;
// the slices are reused after each returns. It returns the bytes consumed
// through the last newline and what follows it.
func readBatches(r io.Reader, each func(lines [][]byte)) (consumed int64, partial []byte, err error) {
	buf := make([]byte, 0, readBatchSize)
	var lines [][]byte
	for {
		if len(buf) == cap(buf) {
			// One line longer than the buffer (a huge tool output).
			buf = append(buf, make([]byte, cap(buf))...)[:len(buf)]
		}
		n, rerr := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if last := bytes.LastIndexByte(buf[len(buf)-n:], '\n'); last >= 0 {
			end := len(buf) - n + last + 1
			lines = splitLines(buf[:end], lines[:0])
			each(lines)
			consumed += int64(end)
			buf = buf[:copy(buf, buf[end:])]
		}
		if errors.Is(rerr, io.EOF) {
			return consumed, buf, nil
		}
		if rerr != nil {
			return consumed, nil, rerr
		}
	}
}

func splitLines(b []byte, lines [][]byte) [][]byte {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		lines = append(lines, b[:i])
		b = b[i+1:]
	}
	return lines
}
