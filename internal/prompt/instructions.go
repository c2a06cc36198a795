package prompt

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Instruction file names, in the order one folder's candidates are tried.
var folderInstructionNames = []string{"AGENTS.override.md", "AGENTS.md", "CLAUDE.md"}

const (
	localInstructionName = "AGENTS.local.md"
	// maxImportDepth is how many @imports deep a chain may go.
	maxImportDepth = 5
	// maxInstructionBytes caps one file, so a runaway file cannot fill the
	// context window on its own.
	maxInstructionBytes = 64 << 10
)

// InstructionFile is one file of instructions as the model sees it.
type InstructionFile struct {
	Path    string // absolute
	Scope   string // why it was loaded, shown in its heading
	Content string
	// Notes are problems the model should know about: imports that were
	// missing, outside the allowed directories, or too deep.
	Notes []string
}

// Render formats f with its heading.
func (f InstructionFile) Render() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Contents of %s (%s):\n\n", f.Path, f.Scope)
	b.WriteString(strings.TrimSpace(f.Content))
	for _, n := range f.Notes {
		b.WriteString("\n\n(coda: " + n + ")")
	}
	return b.String()
}

// renderInstructions joins files into one reminder text under intro.
func renderInstructions(intro string, files []InstructionFile) string {
	if len(files) == 0 {
		return ""
	}
	parts := []string{intro}
	for _, f := range files {
		parts = append(parts, f.Render())
	}
	return strings.Join(parts, "\n\n")
}

const instructionsIntro = `Instructions from the user and the project follow (AGENTS.md files and rules). Follow them: they take precedence over your default behaviour. They are context from coda, not a message from the user; do not mention them unless asked.`

// loader reads instruction files and follows their @imports. Each file is
// loaded at most once over the loader's life, which also cuts import cycles.
type loader struct {
	home    string
	root    string // the project (repository) root
	allowed []string
	seen    map[string]bool // resolved paths already loaded
}

func newLoader(home, root string) *loader {
	l := &loader{home: home, root: root, seen: make(map[string]bool)}
	for _, d := range []string{root, home} {
		if d == "" {
			continue
		}
		l.allowed = append(l.allowed, d)
		if r, err := filepath.EvalSymlinks(d); err == nil && r != d {
			l.allowed = append(l.allowed, r)
		}
	}
	return l
}

// load reads path and, after it, every file it imports (depth first). A
// file already loaded or missing yields nothing.
func (l *loader) load(path, scope string) []InstructionFile {
	key := resolve(path)
	if l.seen[key] {
		return nil
	}
	content, note, err := readInstructionFile(path)
	if err != nil {
		return nil
	}
	l.seen[key] = true
	f := InstructionFile{Path: path, Scope: scope, Content: content}
	if note != "" {
		f.Notes = append(f.Notes, note)
	}
	return l.withImports(f, 1)
}

// withImports returns f followed by the files it imports at depth.
func (l *loader) withImports(f InstructionFile, depth int) []InstructionFile {
	out := []InstructionFile{f}
	var imported []InstructionFile
	for _, ref := range importRefs(f.Content) {
		target, ok := l.importPath(f.Path, ref)
		switch {
		case !ok:
			out[0].Notes = append(out[0].Notes, fmt.Sprintf("@%s was not imported: it is outside the project and the home directory", ref))
			continue
		case depth > maxImportDepth:
			out[0].Notes = append(out[0].Notes, fmt.Sprintf("@%s was not imported: imports nest at most %d deep", ref, maxImportDepth))
			continue
		}
		key := resolve(target)
		if l.seen[key] {
			continue
		}
		content, note, err := readInstructionFile(target)
		if err != nil {
			out[0].Notes = append(out[0].Notes, fmt.Sprintf("@%s was not imported: %s", ref, describeReadError(err)))
			continue
		}
		// Resolving the link may have left the allowed directories.
		if !l.inside(key) {
			out[0].Notes = append(out[0].Notes, fmt.Sprintf("@%s was not imported: it is outside the project and the home directory", ref))
			continue
		}
		l.seen[key] = true
		child := InstructionFile{Path: target, Scope: "imported by " + f.Path, Content: content}
		if note != "" {
			child.Notes = append(child.Notes, note)
		}
		imported = append(imported, l.withImports(child, depth+1)...)
	}
	return append(out, imported...)
}

// importPath turns an @reference into an absolute path, reporting whether
// it lies inside the project or the home directory.
func (l *loader) importPath(from, ref string) (string, bool) {
	var p string
	switch {
	case strings.HasPrefix(ref, "~/"):
		if l.home == "" {
			return "", false
		}
		p = filepath.Join(l.home, ref[2:])
	case filepath.IsAbs(ref):
		p = filepath.Clean(ref)
	default:
		p = filepath.Join(filepath.Dir(from), ref)
	}
	return p, l.inside(p)
}

func (l *loader) inside(p string) bool {
	for _, d := range l.allowed {
		if within(d, p) {
			return true
		}
	}
	return false
}

// within reports whether p is dir or below it.
func within(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// resolve follows symlinks when it can, so two names of one file count once.
func resolve(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// readInstructionFile reads a regular file, capping its size; the note says
// when it was cut.
func readInstructionFile(path string) (content, note string, err error) {
	info, err := os.Stat(path)
	if err != nil {
		return "", "", err
	}
	if !info.Mode().IsRegular() {
		return "", "", fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxInstructionBytes+1))
	if err != nil {
		return "", "", err
	}
	if len(data) > maxInstructionBytes {
		data = data[:maxInstructionBytes]
		note = fmt.Sprintf("%s is longer than %d KB; only its beginning is shown", path, maxInstructionBytes>>10)
	}
	return strings.ToValidUTF8(string(data), "\uFFFD"), note, nil
}

func describeReadError(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "file not found"
	}
	return err.Error()
}

// importRefs finds the @path lines of a Markdown text: a line holding only
// "@path" (optionally as a list item). Lines inside code fences and inline
// code spans are not imports.
func importRefs(text string) []string {
	var refs []string
	fence := ""
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
				fence = ""
			}
			continue
		}
		if f := fenceOpener(trimmed); f != "" {
			fence = f
			continue
		}
		for _, marker := range []string{"- ", "* ", "+ "} {
			if strings.HasPrefix(trimmed, marker) {
				trimmed = strings.TrimSpace(trimmed[len(marker):])
				break
			}
		}
		if !strings.HasPrefix(trimmed, "@") || strings.ContainsAny(trimmed, " \t`") {
			continue
		}
		ref := strings.TrimPrefix(trimmed, "@")
		if ref == "" || ref == "/" {
			continue
		}
		refs = append(refs, ref)
	}
	return refs
}

// fenceOpener returns the fence a line opens ("```" or "~~~", as long as
// written), or "".
func fenceOpener(line string) string {
	for _, c := range []string{"`", "~"} {
		n := 0
		for n < len(line) && line[n] == c[0] {
			n++
		}
		if n >= 3 {
			return line[:n]
		}
	}
	return ""
}

// projectRoot is the repository root above cwd (the nearest folder with a
// .git entry), or cwd itself outside a repository.
func projectRoot(cwd string) string {
	for dir := cwd; ; {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return cwd
		}
		dir = parent
	}
}

// foldersDown lists the folders from root down to dir, both included. dir
// must be inside root.
func foldersDown(root, dir string) []string {
	var out []string
	for d := dir; ; d = filepath.Dir(d) {
		out = append(out, d)
		if d == root || filepath.Dir(d) == d {
			break
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// folderFile is the instruction file of one folder: AGENTS.override.md,
// else AGENTS.md, else CLAUDE.md; "" when it has none.
func folderFile(dir string) string {
	for _, name := range folderInstructionNames {
		p := filepath.Join(dir, name)
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() {
			return p
		}
	}
	return ""
}
