package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

//go:embed write.md
var writeDescription string

type writeInput struct {
	FilePath string `json:"file_path" jsonschema_description:"Absolute path of the file to write (a relative path resolves against the working directory). Missing parent directories are created."`
	Content  string `json:"content" jsonschema_description:"The complete new content of the file."`
}

type writeTool struct{}

// NewWrite returns the Write tool: creates a file or replaces its content.
func NewWrite() Tool { return writeTool{} }

func (writeTool) Name() string                         { return "Write" }
func (writeTool) Description() string                  { return writeDescription }
func (writeTool) InputSchema() json.RawMessage         { return SchemaFor[writeInput]() }
func (writeTool) ReadOnly() bool                       { return false }
func (writeTool) ConcurrencySafe(json.RawMessage) bool { return false }

func (writeTool) Run(ctx context.Context, call Call) Result {
	in, err := Decode[writeInput](call.Input)
	if err != nil {
		return Errorf("Write: %v", err)
	}
	if in.FilePath == "" {
		return Errorf("Write: file_path is empty; give the path of the file to write")
	}
	abs := call.Env.Abs(in.FilePath)
	target := stateKey(abs)
	var before string
	mode := fs.FileMode(0o644)
	created := false
	info, err := os.Stat(target)
	switch {
	case err == nil && info.IsDir():
		return Errorf("Write: %s is a directory; give the path of a file", abs)
	case err == nil && !info.Mode().IsRegular():
		return notRegularError("Write", abs)
	case err == nil:
		old, modTime, err := Stat(target)
		if err != nil {
			return Errorf("Write: read %s: %v", abs, err)
		}
		if err := call.Env.Files.CheckFresh(target, old, modTime); err != nil {
			return Errorf("Write: %v. Write replaces the whole file, so it must not overwrite content you have not seen.", err)
		}
		before = string(old)
		mode = keptMode(info.Mode())
	case errors.Is(err, fs.ErrNotExist):
		created = true
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return Errorf("Write: create directory for %s: %v", abs, err)
		}
	default:
		return Errorf("Write: cannot access %s: %v", abs, err)
	}
	if err := ctx.Err(); err != nil {
		return Errorf("Write: %v", err)
	}
	data := []byte(in.Content)
	if err := commitChange(call.Env, target, data, mode); err != nil {
		return Errorf("Write: %v", err)
	}
	diff := NewFileDiff(abs, before, in.Content, created)
	verb := "Updated"
	if created {
		verb = "Created"
	}
	text := fmt.Sprintf("%s %s (%d bytes, %d lines).", verb, abs, len(data), countLines(data))
	if !created {
		text = fmt.Sprintf("%s %s (%d bytes, %d lines; +%d -%d lines changed).", verb, abs, len(data), countLines(data), diff.Added, diff.Removed)
	}
	return Result{Content: TextResult(text).Content, Display: diff}
}

// keptMode is the part of an existing file's mode a rewrite keeps.
func keptMode(m fs.FileMode) fs.FileMode {
	return m & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
}

// commitChange writes data over target for a tool: the session checkpoints
// the old content first (for rewind), and the file state learns the new
// content so the next edit needs no Read in between.
func commitChange(env *Env, target string, data []byte, mode fs.FileMode) error {
	if err := env.NoteBeforeChange(target); err != nil {
		return fmt.Errorf("checkpoint %s before changing it: %w", target, err)
	}
	if err := writeFileAtomic(target, data, mode); err != nil {
		return err
	}
	recordWritten(env, target, data)
	env.NoteAfterChange(target)
	return nil
}

// recordWritten notes what the agent just wrote as seen, so the next Edit
// needs no Read in between.
func recordWritten(env *Env, target string, data []byte) {
	if info, err := os.Stat(target); err == nil {
		env.Files.Record(target, data, info.ModTime())
	}
}

// writeFileAtomic replaces path with data: it writes a temporary file in
// the same directory and renames it over path, so a reader (or a crash)
// never sees half a file.
func writeFileAtomic(path string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".coda-*")
	if err != nil {
		return fmt.Errorf("create temporary file in %s: %w", dir, err)
	}
	name := tmp.Name()
	fail := func(err error) error {
		tmp.Close()
		os.Remove(name)
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(fmt.Errorf("write %s: %w", path, err))
	}
	// Chmod before the rename: CreateTemp made the file 0600.
	if err := tmp.Chmod(mode); err != nil {
		return fail(fmt.Errorf("set mode of %s: %w", path, err))
	}
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return fmt.Errorf("replace %s: %w", path, err)
	}
	return nil
}
