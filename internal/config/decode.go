package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// Error is a problem in a settings file, placed where the user can find it:
// "/p/.coda/settings.json:3:14: model: expected a string, found a number".
type Error struct {
	Path   string // the file; "--settings" for inline JSON; "" when unknown
	Line   int    // 1-based; 0 when the place is unknown
	Column int    // 1-based, in characters
	Key    string // key path of the offending value; "" for a syntax error
	Msg    string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Line > 0 {
		if b.Len() > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%d:%d", e.Line, e.Column)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// place turns a *posError from parsing or decoding data into an *Error
// naming the file, line and column; other errors pass through.
func place(path string, data []byte, err error) error {
	var pe *posError
	if !errors.As(err, &pe) {
		return err
	}
	e := &Error{Path: path, Key: pe.key, Msg: pe.msg}
	if pe.off >= 0 && data != nil {
		e.Line, e.Column = lineCol(data, pe.off)
	}
	return e
}

// nodeDecoder is implemented by types whose JSON has more than one shape.
type nodeDecoder interface {
	decodeNode(n *node, path keyPath) error
}

func mismatch(n *node, path keyPath, want string) error {
	return &posError{off: n.off, key: path.String(), msg: fmt.Sprintf("expected %s, found %s", want, n.kind)}
}

// decodeSettings fills s from a parsed document. Unlike encoding/json it
// matches keys exactly (a "Model" key is an unknown key, kept in Extra, not
// the model) and reports every wrong type with the value's position.
func decodeSettings(n *node, s *Settings) error {
	if n.kind != kindObject {
		return &posError{off: n.off, msg: fmt.Sprintf("settings must be a JSON object, found %s", n.kind)}
	}
	*s = Settings{}
	return decodeValue(n, reflect.ValueOf(s).Elem(), nil)
}

func decodeValue(n *node, v reflect.Value, path keyPath) error {
	if v.CanAddr() {
		if d, ok := v.Addr().Interface().(nodeDecoder); ok {
			return d.decodeNode(n, path)
		}
	}
	t := v.Type()
	if t == reflect.TypeFor[json.RawMessage]() {
		if n.kind != kindNull {
			v.SetBytes(compact(n))
		}
		return nil
	}
	if n.kind == kindNull {
		v.SetZero() // null means "not set", as in encoding/json
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		if err := decodeValue(n, p.Elem(), path); err != nil {
			return err
		}
		v.Set(p)
	case reflect.String:
		if n.kind != kindString {
			return mismatch(n, path, "a string")
		}
		v.SetString(n.str)
	case reflect.Bool:
		if n.kind != kindBool {
			return mismatch(n, path, "true or false")
		}
		v.SetBool(n.b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, ok := integer(n)
		if !ok && n.kind == kindNumber {
			msg := fmt.Sprintf("expected an integer, found %s", n.num)
			if f, err := strconv.ParseFloat(n.num.String(), 64); err == nil && f == math.Trunc(f) {
				msg = fmt.Sprintf("%s is out of range", n.num)
			}
			return &posError{off: n.off, key: path.String(), msg: msg}
		}
		if !ok {
			return mismatch(n, path, "an integer")
		}
		if v.OverflowInt(i) {
			return &posError{off: n.off, key: path.String(), msg: fmt.Sprintf("%s is out of range", n.num)}
		}
		v.SetInt(i)
	case reflect.Float32, reflect.Float64:
		if n.kind != kindNumber {
			return mismatch(n, path, "a number")
		}
		f, err := strconv.ParseFloat(n.num.String(), t.Bits())
		if err != nil {
			return &posError{off: n.off, key: path.String(), msg: fmt.Sprintf("%s is out of range", n.num)}
		}
		v.SetFloat(f)
	case reflect.Slice:
		if n.kind != kindArray {
			return mismatch(n, path, "an array")
		}
		s := reflect.MakeSlice(t, len(n.arr), len(n.arr))
		for i, item := range n.arr {
			if err := decodeValue(item, s.Index(i), path.index(i)); err != nil {
				return err
			}
		}
		v.Set(s)
	case reflect.Map:
		if n.kind != kindObject {
			return mismatch(n, path, "an object")
		}
		m := reflect.MakeMapWithSize(t, len(n.keys))
		for _, k := range n.keys {
			e := reflect.New(t.Elem()).Elem()
			if err := decodeValue(n.obj[k], e, path.key(k)); err != nil {
				return err
			}
			m.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), e)
		}
		v.Set(m)
	case reflect.Struct:
		if n.kind != kindObject {
			return mismatch(n, path, "an object")
		}
		return decodeStruct(n, v, path)
	default:
		return fmt.Errorf("config: cannot decode into %s", t) // a bug in this package's types
	}
	return nil
}

// decodeStruct fills the fields of a struct by their json names. Keys no
// field claims go to a field named Extra of type map[string]json.RawMessage
// when the struct has one, and are otherwise left to the layer's Raw map.
func decodeStruct(n *node, v reflect.Value, path keyPath) error {
	t := v.Type()
	fields := make(map[string]int, t.NumField())
	extra := -1
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-":
			if f.Name == "Extra" && f.Type == reflect.TypeFor[map[string]json.RawMessage]() {
				extra = i
			}
			continue
		case name == "":
			name = f.Name
		}
		fields[name] = i
	}
	for _, k := range n.keys {
		child := n.obj[k]
		if i, ok := fields[k]; ok {
			if err := decodeValue(child, v.Field(i), path.key(k)); err != nil {
				return err
			}
			continue
		}
		if extra >= 0 {
			m := v.Field(extra)
			if m.IsNil() {
				m.Set(reflect.MakeMap(m.Type()))
			}
			m.SetMapIndex(reflect.ValueOf(k), reflect.ValueOf(compact(child)))
		}
	}
	return nil
}

// integer reads a number node as an int64, accepting integral forms such as
// 1e3 or 30.0 that JavaScript (and so Claude Code) treats as integers.
func integer(n *node) (int64, bool) {
	if n.kind != kindNumber {
		return 0, false
	}
	if i, err := strconv.ParseInt(n.num.String(), 10, 64); err == nil {
		return i, true
	}
	f, err := strconv.ParseFloat(n.num.String(), 64)
	if err != nil || f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return 0, false
	}
	return int64(f), true
}
