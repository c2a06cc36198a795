package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/invopop/jsonschema"
)

// SchemaFor generates the JSON Schema of T, an input struct whose fields
// carry json tags (omitempty marks optional) and jsonschema_description tags.
func SchemaFor[T any]() json.RawMessage {
	r := jsonschema.Reflector{DoNotReference: true, Anonymous: true, AllowAdditionalProperties: false}
	var zero T
	s := r.Reflect(&zero)
	s.Version = ""
	raw, err := json.Marshal(s)
	if err != nil {
		// Input types are ours and fixed at compile time; a failure here is
		// a programming error caught by every test that builds a registry.
		panic(fmt.Sprintf("schema for %T: %v", zero, err))
	}
	return raw
}

// Decode parses input into a T, checking that it is a JSON object, that
// every required field (no omitempty) is present and that each field has
// the right type. Errors name the field so the model can fix its call.
func Decode[T any](input json.RawMessage) (T, error) {
	var v T
	trimmed := bytes.TrimSpace(input)
	if len(trimmed) == 0 {
		trimmed = []byte("{}")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &fields); err != nil || fields == nil {
		return v, fmt.Errorf("input must be a JSON object")
	}
	t := reflect.TypeOf(v)
	if t.Kind() == reflect.Struct {
		known := make(map[string]bool)
		for i := range t.NumField() {
			name, opts, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			known[name] = true
			optional := strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
			raw, present := fields[name]
			if !optional && (!present || string(raw) == "null") {
				return v, fmt.Errorf("missing required parameter %q", name)
			}
		}
		for name := range fields {
			if !known[name] {
				return v, fmt.Errorf("unknown parameter %q", name)
			}
		}
	}
	if err := json.Unmarshal(trimmed, &v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return v, fmt.Errorf("parameter %q must be %s, got %s", te.Field, jsonKind(te.Type), te.Value)
		}
		return v, fmt.Errorf("invalid input: %v", err)
	}
	return v, nil
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint, reflect.Uint64:
		return "an integer"
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.Slice:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}
