package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// AddPermissionRule adds rule to permissions.<list> ("allow", "ask" or
// "deny") of the settings file at path, creating the file and its folder
// when missing. The other keys stay, in their order; the file is rewritten
// with 2-space indentation. A rule already listed leaves the file untouched.
//
// Two coda processes adding rules to one file at the same instant can lose
// one of the rules: the write is atomic, the read-modify-write is not.
func AddPermissionRule(path, list, rule string) error {
	switch list {
	case "allow", "ask", "deny":
	default:
		return fmt.Errorf("add permission rule to %s: unknown list %q (want allow, ask or deny)", path, list)
	}
	if strings.TrimSpace(rule) == "" {
		return fmt.Errorf("add permission rule to %s: empty rule", path)
	}
	return updateJSON(path, func(root *node) (bool, error) {
		perms, err := memberObject(root, "permissions", nil)
		if err != nil {
			return false, err
		}
		rules, err := memberArray(perms, list, keyPath{"permissions"})
		if err != nil {
			return false, err
		}
		for _, r := range rules.arr {
			if r.kind == kindString && r.str == rule {
				return false, nil
			}
		}
		rules.arr = append(rules.arr, newString(rule))
		return true, nil
	})
}

// AddTrustedDirectory records dir (made absolute) in the trustedDirectories
// list of the user settings file. A directory already listed leaves the file
// untouched.
func AddTrustedDirectory(userSettingsPath, dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("trust %s: %w", dir, err)
	}
	return updateJSON(userSettingsPath, func(root *node) (bool, error) {
		dirs, err := memberArray(root, "trustedDirectories", nil)
		if err != nil {
			return false, err
		}
		for _, d := range dirs.arr {
			if d.kind == kindString && filepath.Clean(d.str) == abs {
				return false, nil
			}
		}
		dirs.arr = append(dirs.arr, newString(abs))
		return true, nil
	})
}

// EnsureGitignored adds relPath (slash-separated, relative to projectDir)
// to <projectDir>/.gitignore unless a line already names it, creating the
// file when missing.
func EnsureGitignored(projectDir, relPath string) error {
	rel := strings.TrimSpace(filepath.ToSlash(relPath))
	if rel == "" {
		return fmt.Errorf("gitignore in %s: empty path", projectDir)
	}
	path := followLink(filepath.Join(projectDir, ".gitignore"))
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if line == rel || line == "/"+rel {
			return nil
		}
	}
	eol := "\n"
	if bytes.Contains(data, []byte("\r\n")) {
		eol = "\r\n"
	}
	out := bytes.Clone(data)
	if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, eol...)
	}
	out = append(out, rel+eol...)
	return writeAtomic(path, out)
}

// updateJSON applies change to the settings document at path and writes it
// back when change reports a change. A missing file starts as {}.
func updateJSON(path string, change func(root *node) (bool, error)) error {
	path = followLink(path)
	data, err := os.ReadFile(path)
	root := newObject()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		data = nil
	case err != nil:
		return fmt.Errorf("read settings: %w", err)
	default:
		if root, err = parse(data); err != nil {
			return place(path, data, err)
		}
		if root.kind != kindObject {
			return place(path, data, &posError{off: root.off, msg: fmt.Sprintf("settings must be a JSON object, found %s", root.kind)})
		}
	}
	changed, err := change(root)
	if err != nil {
		return place(path, data, err)
	}
	if !changed {
		return nil
	}
	var buf bytes.Buffer
	encode(&buf, root, "  ", 0)
	buf.WriteByte('\n')
	return writeAtomic(path, buf.Bytes())
}

// memberObject returns parent[key], adding an empty object when it is
// missing or null.
func memberObject(parent *node, key string, path keyPath) (*node, error) {
	v := parent.get(key)
	switch {
	case v == nil || v.kind == kindNull:
		v = newObject()
		parent.set(key, v)
	case v.kind != kindObject:
		return nil, mismatch(v, path.key(key), "an object")
	}
	return v, nil
}

// memberArray returns parent[key], adding an empty array when it is missing
// or null.
func memberArray(parent *node, key string, path keyPath) (*node, error) {
	v := parent.get(key)
	switch {
	case v == nil || v.kind == kindNull:
		v = &node{off: -1, kind: kindArray}
		parent.set(key, v)
	case v.kind != kindArray:
		return nil, mismatch(v, path.key(key), "an array")
	}
	return v, nil
}

// followLink resolves a symlinked file, so that a settings file linked from
// a dotfiles repository is updated in place instead of replaced by a copy.
func followLink(path string) string {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if target, err := filepath.EvalSymlinks(path); err == nil {
			return target
		}
	}
	return path
}

// writeAtomic replaces path with data through a temporary file in the same
// folder, so a crash leaves the old file or the new one, never half of one.
// The file keeps its permissions; a new one gets 0644.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, mode)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
