package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// node is one parsed JSON value that remembers where it started in its file
// and the order of its object keys. Positions give errors a line and column;
// key order lets the writers rewrite a file without shuffling it.
type node struct {
	off  int // byte offset of the value's first character; -1 when synthetic
	kind kind

	b    bool
	num  json.Number // the literal as written
	str  string
	arr  []*node
	keys []string // object keys, in first-seen order
	obj  map[string]*node
}

type kind int

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

func (k kind) String() string {
	switch k {
	case kindBool:
		return "a boolean"
	case kindNumber:
		return "a number"
	case kindString:
		return "a string"
	case kindArray:
		return "an array"
	case kindObject:
		return "an object"
	}
	return "null"
}

func newObject() *node { return &node{off: -1, kind: kindObject, obj: map[string]*node{}} }

func newString(s string) *node { return &node{off: -1, kind: kindString, str: s} }

// get returns the member key of an object node, or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != kindObject {
		return nil
	}
	return n.obj[key]
}

// set adds or replaces an object member, keeping the key's place.
func (n *node) set(key string, v *node) {
	if _, ok := n.obj[key]; !ok {
		n.keys = append(n.keys, key)
	}
	n.obj[key] = v
}

// without returns a shallow copy of an object node lacking key.
func (n *node) without(key string) *node {
	if n.get(key) == nil {
		return n
	}
	c := newObject()
	c.off = n.off
	for _, k := range n.keys {
		if k != key {
			c.set(k, n.obj[k])
		}
	}
	return c
}

// bom is the UTF-8 byte order mark some Windows editors write first.
const bom = "\xEF\xBB\xBF"

// parse reads one JSON document. A document of only whitespace is an empty
// object, so an empty settings file someone touched is not an error.
// Syntax errors are *posError values pointing at the offending byte.
func parse(data []byte) (*node, error) {
	data = bytes.TrimPrefix(data, []byte(bom))
	if len(bytes.TrimSpace(data)) == 0 {
		return newObject(), nil
	}
	// The standard scanner reports the most precise offsets for bad input;
	// only input it accepts reaches the token walk below.
	var probe json.RawMessage // checks the syntax, converts nothing
	if err := json.Unmarshal(data, &probe); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			// Offset counts the bytes read, the offending one included; an
			// unexpected end is reported just past the last byte.
			off := int(se.Offset) - 1
			if strings.HasPrefix(se.Error(), "unexpected end") {
				off = int(se.Offset)
			}
			off = max(off, 0)
			return nil, &posError{off: off, msg: se.Error()}
		}
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	p := &parser{dec: dec, data: data}
	return p.value()
}

type parser struct {
	dec  *json.Decoder
	data []byte
}

// start finds where the next value begins: the decoder's offset sits after
// the previous token, before any separator and whitespace.
func (p *parser) start() int {
	i := int(p.dec.InputOffset())
	for i < len(p.data) {
		switch p.data[i] {
		case ' ', '\t', '\r', '\n', ',', ':':
			i++
			continue
		}
		break
	}
	return i
}

func (p *parser) value() (*node, error) {
	off := p.start()
	tok, err := p.dec.Token()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, &posError{off: off, msg: err.Error()}
	}
	n := &node{off: off}
	switch t := tok.(type) {
	case nil:
		n.kind = kindNull
	case bool:
		n.kind, n.b = kindBool, t
	case json.Number:
		n.kind, n.num = kindNumber, t
	case string:
		n.kind, n.str = kindString, t
	case json.Delim:
		switch t {
		case '[':
			n.kind = kindArray
			for p.dec.More() {
				v, err := p.value()
				if err != nil {
					return nil, err
				}
				n.arr = append(n.arr, v)
			}
		case '{':
			n.kind, n.obj = kindObject, map[string]*node{}
			for p.dec.More() {
				kt, err := p.dec.Token()
				if err != nil {
					return nil, &posError{off: p.start(), msg: err.Error()}
				}
				key, _ := kt.(string)
				v, err := p.value()
				if err != nil {
					return nil, err
				}
				n.set(key, v) // a repeated key keeps its first place, last value
			}
		}
		if _, err := p.dec.Token(); err != nil { // the closing delimiter
			return nil, &posError{off: p.start(), msg: err.Error()}
		}
	}
	return n, nil
}

// posError is an error at a byte offset of a document not yet known by name.
type posError struct {
	off int
	key string // path of the offending value, "" when the syntax is wrong
	msg string
}

func (e *posError) Error() string {
	if e.key == "" {
		return e.msg
	}
	return e.key + ": " + e.msg
}

// lineCol turns a byte offset into a 1-based line and column, counting the
// column in characters as editors do.
func lineCol(data []byte, off int) (line, col int) {
	data = bytes.TrimPrefix(data, []byte(bom))
	if off > len(data) {
		off = len(data)
	}
	before := data[:off]
	line = bytes.Count(before, []byte{'\n'}) + 1
	lineStart := bytes.LastIndexByte(before, '\n') + 1
	return line, utf8.RuneCount(before[lineStart:]) + 1
}

// encode writes n as JSON. With indent "" the output is compact; otherwise
// every member and element sits on its own line, as JSON.stringify(v, null, 2)
// lays it out, so files coda rewrites look like files Claude Code rewrites.
func encode(buf *bytes.Buffer, n *node, indent string, depth int) {
	newline := func(d int) {
		if indent == "" {
			return
		}
		buf.WriteByte('\n')
		for range d {
			buf.WriteString(indent)
		}
	}
	switch n.kind {
	case kindNull:
		buf.WriteString("null")
	case kindBool:
		buf.WriteString(strconv.FormatBool(n.b))
	case kindNumber:
		buf.WriteString(n.num.String())
	case kindString:
		writeString(buf, n.str)
	case kindArray:
		if len(n.arr) == 0 {
			buf.WriteString("[]")
			return
		}
		buf.WriteByte('[')
		for i, v := range n.arr {
			if i > 0 {
				buf.WriteByte(',')
			}
			newline(depth + 1)
			encode(buf, v, indent, depth+1)
		}
		newline(depth)
		buf.WriteByte(']')
	case kindObject:
		if len(n.keys) == 0 {
			buf.WriteString("{}")
			return
		}
		buf.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			newline(depth + 1)
			writeString(buf, k)
			buf.WriteByte(':')
			if indent != "" {
				buf.WriteByte(' ')
			}
			encode(buf, n.obj[k], indent, depth+1)
		}
		newline(depth)
		buf.WriteByte('}')
	}
}

// writeString quotes s without the HTML escaping json.Marshal applies, so a
// rule like "Bash(make && make test)" stays readable in the file.
func writeString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)           // encoding a string cannot fail
	buf.Truncate(buf.Len() - 1) // Encode's trailing newline
}

func compact(n *node) json.RawMessage {
	var buf bytes.Buffer
	encode(&buf, n, "", 0)
	return buf.Bytes()
}

// plain converts n to the values encoding/json produces for an any:
// map[string]any, []any, string, float64, bool and nil.
func plain(n *node) any {
	switch n.kind {
	case kindBool:
		return n.b
	case kindNumber:
		if f, err := n.num.Float64(); err == nil {
			return f
		}
		return n.num
	case kindString:
		return n.str
	case kindArray:
		out := make([]any, len(n.arr))
		for i, v := range n.arr {
			out[i] = plain(v)
		}
		return out
	case kindObject:
		out := make(map[string]any, len(n.obj))
		for k, v := range n.obj {
			out[k] = plain(v)
		}
		return out
	}
	return nil
}

// equal reports whether two values are the same JSON, key order aside.
func equal(a, b *node) bool {
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case kindNull:
		return true
	case kindBool:
		return a.b == b.b
	case kindNumber:
		if a.num == b.num {
			return true
		}
		fa, errA := a.num.Float64()
		fb, errB := b.num.Float64()
		return errA == nil && errB == nil && fa == fb
	case kindString:
		return a.str == b.str
	case kindArray:
		if len(a.arr) != len(b.arr) {
			return false
		}
		for i := range a.arr {
			if !equal(a.arr[i], b.arr[i]) {
				return false
			}
		}
		return true
	case kindObject:
		if len(a.obj) != len(b.obj) {
			return false
		}
		for k, v := range a.obj {
			w, ok := b.obj[k]
			if !ok || !equal(v, w) {
				return false
			}
		}
		return true
	}
	return false
}

// keyPath renders the path to a value the way a user would write it:
// permissions.allow[2], models["openai/qwen3"].contextWindow.
type keyPath []string

// indexMark starts a segment that is an array index rather than a key. A key
// starting with an escaped NUL would render as an index; it only affects the
// wording of an error message.
const indexMark = "\x00"

func (p keyPath) key(k string) keyPath {
	return append(p[:len(p):len(p)], k)
}

func (p keyPath) index(i int) keyPath {
	return append(p[:len(p):len(p)], indexMark+strconv.Itoa(i))
}

func (p keyPath) String() string {
	var b bytes.Buffer
	for _, seg := range p {
		switch {
		case strings.HasPrefix(seg, indexMark):
			fmt.Fprintf(&b, "[%s]", seg[len(indexMark):])
		case isIdent(seg):
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(seg)
		default:
			fmt.Fprintf(&b, "[%s]", strconv.Quote(seg))
		}
	}
	return b.String()
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || r == '$' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z':
		case i > 0 && ('0' <= r && r <= '9' || r == '-'):
		default:
			return false
		}
	}
	return true
}
