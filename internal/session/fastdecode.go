package session

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/coda-cli/coda/internal/llm"
)

// fastDecodeRecord reads the records that make up almost all of a
// transcript (messages and usage) in a single pass over the line, which
// is several times faster than encoding/json's validate-then-decode with
// reflection; resuming a long session is dominated by it.
//
// It gives up (returns false) on anything outside the shapes coda writes:
// other record types, unknown, repeated or non-exact keys, null, numbers
// that are not plain integers, invalid UTF-8, lone surrogates. The caller
// then decodes the line with encoding/json, so this only has to agree
// with that path on what it accepts; a differential test and a fuzz test
// hold it to that.
func fastDecodeRecord(line []byte, rec *Record) bool {
	s := scanner{b: line}
	ok := s.object(func(key []byte) bool {
		switch string(key) {
		case "type":
			return s.str(&rec.Type)
		case "ts":
			return s.time(&rec.Time)
		case "message":
			rec.Message = new(llm.Message)
			return s.message(rec.Message)
		case "usage":
			rec.Usage = new(llm.Usage)
			return s.usage(rec.Usage)
		case "model":
			return s.str(&rec.Model)
		case "mode":
			return s.str(&rec.Mode)
		case "title":
			return s.str(&rec.Title)
		}
		return false
	})
	s.ws()
	return ok && s.i == len(s.b)
}

type scanner struct {
	b []byte
	i int
}

func (s *scanner) message(m *llm.Message) bool {
	ok := s.object(func(key []byte) bool {
		switch string(key) {
		case "id":
			return s.str(&m.ID)
		case "role":
			var r string
			ok := s.str(&r)
			m.Role = llm.Role(r)
			return ok
		case "content":
			m.Blocks = make([]llm.Block, 0, 2)
			return s.blocks(&m.Blocks)
		case "meta":
			return s.meta(&m.Meta)
		}
		return false
	})
	if m.Blocks == nil {
		m.Blocks = []llm.Block{}
	}
	return ok
}

// blocks appends the blocks of a JSON array to out.
func (s *scanner) blocks(out *[]llm.Block) bool {
	return s.array(func() bool {
		b, ok := s.block()
		if ok {
			*out = append(*out, b)
		}
		return ok
	})
}

// block reads one block the way wireBlock.block builds it.
func (s *scanner) block() (llm.Block, bool) {
	var w wireBlock
	var content []llm.Block
	ok := s.object(func(key []byte) bool {
		switch string(key) {
		case "type":
			return s.str(&w.Type)
		case "text":
			return s.str(&w.Text)
		case "thinking":
			return s.str(&w.Thinking)
		case "signature":
			return s.str(&w.Signature)
		case "data":
			return s.str(&w.Data)
		case "id":
			return s.str(&w.ID)
		case "name":
			return s.str(&w.Name)
		case "input":
			return s.raw(&w.Input)
		case "tool_use_id":
			return s.str(&w.ToolUseID)
		case "content":
			return s.blocks(&content)
		case "is_error":
			return s.bool(&w.IsError)
		case "media_type":
			return s.str(&w.MediaType)
		}
		return false
	})
	if !ok {
		return nil, false
	}
	if w.Type == "tool_result" {
		return llm.ToolResult{ToolUseID: w.ToolUseID, Content: content, IsError: w.IsError}, true
	}
	b, err := w.block()
	return b, err == nil
}

func (s *scanner) meta(m *llm.Meta) bool {
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "time":
			return s.time(&m.Time)
		case "model":
			return s.str(&m.Model)
		case "usage":
			m.Usage = new(llm.Usage)
			return s.usage(m.Usage)
		case "status":
			var v string
			ok := s.str(&v)
			m.Status = llm.Status(v)
			return ok
		case "reminder":
			return s.bool(&m.Reminder)
		case "stop_reason":
			var v string
			ok := s.str(&v)
			m.StopReason = llm.StopReason(v)
			return ok
		}
		return false
	})
}

func (s *scanner) usage(u *llm.Usage) bool {
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "input_tokens":
			return s.int(&u.InputTokens)
		case "output_tokens":
			return s.int(&u.OutputTokens)
		case "cache_creation_input_tokens":
			return s.int(&u.CacheCreationInputTokens)
		case "cache_read_input_tokens":
			return s.int(&u.CacheReadInputTokens)
		}
		return false
	})
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// maxKeys bounds the keys of one object; more means a shape coda does not
// write.
const maxKeys = 16

// object reads {"key": value, ...}, calling field with the scanner at
// each value. Keys must be plain (no escapes) and distinct.
func (s *scanner) object(field func(key []byte) bool) bool {
	s.ws()
	if !s.eat('{') {
		return false
	}
	s.ws()
	if s.eat('}') {
		return true
	}
	var seen [maxKeys][]byte
	for n := 0; ; n++ {
		s.ws()
		key, ok := s.plainString()
		if !ok || n == maxKeys {
			return false
		}
		for _, k := range seen[:n] {
			if bytes.Equal(k, key) {
				return false
			}
		}
		seen[n] = key
		s.ws()
		if !s.eat(':') {
			return false
		}
		s.ws()
		if !field(key) {
			return false
		}
		s.ws()
		if s.eat(',') {
			continue
		}
		return s.eat('}')
	}
}

// array reads [elem, ...], calling elem with the scanner at each element.
func (s *scanner) array(elem func() bool) bool {
	if !s.eat('[') {
		return false
	}
	s.ws()
	if s.eat(']') {
		return true
	}
	for {
		s.ws()
		if !elem() {
			return false
		}
		s.ws()
		if s.eat(',') {
			continue
		}
		return s.eat(']')
	}
}

// plainString reads a string of printable ASCII without escapes and
// returns its bytes (a slice of the line).
func (s *scanner) plainString() ([]byte, bool) {
	if !s.eat('"') {
		return nil, false
	}
	start := s.i
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], true
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			return nil, false
		}
	}
	return nil, false
}

// str reads a JSON string into out.
func (s *scanner) str(out *string) bool {
	if !s.eat('"') {
		return false
	}
	start := s.i
	ascii := true
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			seg := s.b[start:s.i]
			if !ascii && !utf8.Valid(seg) {
				return false // encoding/json would substitute U+FFFD
			}
			*out = string(seg)
			s.i++
			return true
		case c == '\\':
			return s.escapedString(start, out)
		case c < 0x20:
			return false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return false
}

// escapedString finishes a string holding escapes; start is just past
// its opening quote.
func (s *scanner) escapedString(start int, out *string) bool {
	var buf strings.Builder
	buf.Grow(s.i - start + 64)
	buf.Write(s.b[start:s.i])
	var u [utf8.UTFMax]byte
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			str := buf.String()
			if !utf8.ValidString(str) {
				return false
			}
			*out = str
			return true
		case c < 0x20:
			return false
		case c != '\\':
			// Copy the run up to the next quote or escape at once.
			end := s.i + 1
			for end < len(s.b) && s.b[end] != '"' && s.b[end] != '\\' && s.b[end] >= 0x20 {
				end++
			}
			buf.Write(s.b[s.i:end])
			s.i = end
			continue
		}
		if s.i+1 >= len(s.b) {
			return false
		}
		s.i += 2
		switch s.b[s.i-1] {
		case '"', '\\', '/':
			buf.WriteByte(s.b[s.i-1])
		case 'b':
			buf.WriteByte('\b')
		case 'f':
			buf.WriteByte('\f')
		case 'n':
			buf.WriteByte('\n')
		case 'r':
			buf.WriteByte('\r')
		case 't':
			buf.WriteByte('\t')
		case 'u':
			r, ok := s.hex4()
			if !ok {
				return false
			}
			if utf16.IsSurrogate(r) {
				if !(s.eat('\\') && s.eat('u')) {
					return false
				}
				r2, ok := s.hex4()
				if !ok {
					return false
				}
				if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
					return false
				}
			}
			buf.Write(u[:utf8.EncodeRune(u[:], r)])
		default:
			return false
		}
	}
	return false
}

func (s *scanner) hex4() (rune, bool) {
	if s.i+4 > len(s.b) {
		return 0, false
	}
	var r rune
	for _, c := range s.b[s.i : s.i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	s.i += 4
	return r, true
}

// int reads a plain integer: no fraction, no exponent, at most 18 digits.
func (s *scanner) int(out *int) bool {
	neg := s.eat('-')
	start := s.i
	var v int
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		v = v*10 + int(s.b[s.i]-'0')
		s.i++
	}
	digits := s.i - start
	if digits == 0 || digits > 18 || (digits > 1 && s.b[start] == '0') {
		return false
	}
	if s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		return false
	}
	if neg {
		v = -v
	}
	*out = v
	return true
}

func (s *scanner) bool(out *bool) bool {
	switch {
	case bytes.HasPrefix(s.b[s.i:], []byte("true")):
		*out = true
		s.i += 4
	case bytes.HasPrefix(s.b[s.i:], []byte("false")):
		*out = false
		s.i += 5
	default:
		return false
	}
	return true
}

// time reads a timestamp string the way time.Time's UnmarshalJSON does.
func (s *scanner) time(out *time.Time) bool {
	start := s.i
	if _, ok := s.plainString(); !ok {
		return false
	}
	return out.UnmarshalJSON(s.b[start:s.i]) == nil
}

// raw reads any JSON value and keeps its bytes, as json.RawMessage does.
func (s *scanner) raw(out *json.RawMessage) bool {
	start := s.i
	if !s.skip(0) {
		return false
	}
	v := s.b[start:s.i]
	if !json.Valid(v) {
		return false
	}
	*out = append(json.RawMessage(nil), v...)
	return true
}

// maxDepth bounds the nesting skip follows; deeper is left to encoding/json.
const maxDepth = 100

// skip moves past one value, finding its end; raw validates the bytes.
func (s *scanner) skip(depth int) bool {
	if depth > maxDepth || s.i >= len(s.b) {
		return false
	}
	switch s.b[s.i] {
	case '{', '[':
		s.i++
		for s.i < len(s.b) {
			switch c := s.b[s.i]; c {
			case '}', ']':
				s.i++
				return true
			case '"', '{', '[':
				if !s.skip(depth + 1) {
					return false
				}
			default:
				s.i++
			}
		}
		return false
	case '"':
		for s.i++; s.i < len(s.b); s.i++ {
			switch s.b[s.i] {
			case '\\':
				s.i++
			case '"':
				s.i++
				return true
			}
		}
		return false
	}
	// A scalar: up to the next delimiter.
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return true
		}
		s.i++
	}
	return true
}
