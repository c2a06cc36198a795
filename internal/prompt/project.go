package prompt

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
)

// Project holds the instructions of one session: the AGENTS.md chain and
// the unconditional rules read at the start, then the conditional rules
// and the AGENTS.md files of subfolders, which load the first time the
// model reads or edits a file they cover.
//
// The chain is ~/.coda/AGENTS.md, then one file per folder from the
// repository root down to the working directory (AGENTS.override.md, else
// AGENTS.md, else CLAUDE.md), then AGENTS.local.md files, then the rules
// in ~/.coda/rules and <root>/.coda/rules without a paths: list.
type Project struct {
	home, root, cwd string

	mu      sync.Mutex
	ld      *loader
	start   []InstructionFile
	later   []InstructionFile // loaded on first touch, in load order
	pending []rule            // conditional rules not applied yet
	handled map[string]bool   // touched files already considered
	checked map[string]bool   // folders below cwd already searched
	sent    bool              // the start instructions went out
}

// LoadProject reads the instructions for a session in cwd. home is the
// user's home directory ("" skips the user files). Unreadable files are
// skipped; it never fails.
func LoadProject(home, cwd string) *Project {
	p := &Project{home: home, cwd: filepath.Clean(cwd), root: projectRoot(filepath.Clean(cwd))}
	p.reset()
	return p
}

// Root is the project root: the repository holding the working directory.
func (p *Project) Root() string { return p.root }

func (p *Project) reset() {
	p.ld = newLoader(p.home, p.root)
	p.sent = false
	p.start, p.later, p.pending = nil, nil, nil
	p.handled, p.checked = make(map[string]bool), make(map[string]bool)
	if p.home != "" {
		p.start = append(p.start, p.ld.load(filepath.Join(p.home, ".coda", "AGENTS.md"), "user instructions, for all projects")...)
	}
	folders := foldersDown(p.root, p.cwd)
	for _, dir := range folders {
		p.checked[dir] = true
		if f := folderFile(dir); f != "" {
			p.start = append(p.start, p.ld.load(f, "project instructions")...)
		}
	}
	for _, dir := range folders {
		if f := filepath.Join(dir, localInstructionName); isFile(f) {
			p.start = append(p.start, p.ld.load(f, "the user's private project instructions")...)
		}
	}
	var ruleDirs []string
	if p.home != "" {
		ruleDirs = append(ruleDirs, filepath.Join(p.home, ".coda", "rules"))
	}
	ruleDirs = append(ruleDirs, filepath.Join(p.root, ".coda", "rules"))
	for _, r := range loadRules(ruleDirs...) {
		if len(r.Globs) > 0 {
			p.pending = append(p.pending, r)
			continue
		}
		p.start = append(p.start, p.loadRule(r, "rule")...)
	}
}

// Reset forgets what was loaded and reads everything again from disk, as
// for a new conversation (/clear).
func (p *Project) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reset()
}

func (p *Project) loadRule(r rule, scope string) []InstructionFile {
	key := resolve(r.Path)
	if p.ld.seen[key] {
		return nil
	}
	p.ld.seen[key] = true
	return p.ld.withImports(InstructionFile{Path: r.Path, Scope: scope, Content: r.Body}, 1)
}

// Instructions is the text loaded at the start, for the first user
// message; "" when the project has none.
func (p *Project) Instructions() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return renderInstructions(instructionsIntro, p.start)
}

// Loaded is everything loaded so far (start and on touch), for putting
// the instructions back after a compaction.
func (p *Project) Loaded() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return renderInstructions(instructionsIntro, append(append([]InstructionFile(nil), p.start...), p.later...))
}

// Touch is told the files the model has read or written (absolute paths)
// and returns the instructions that now apply for the first time: rules
// whose globs match one of them, and AGENTS.md files of the folders
// between the working directory and them. "" when nothing new applies.
func (p *Project) Touch(paths []string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var loaded []InstructionFile
	for _, path := range paths {
		path = filepath.Clean(path)
		if p.handled[path] {
			continue
		}
		p.handled[path] = true
		loaded = append(loaded, p.nested(path)...)
		if rel := relSlash(p.root, path); rel != "" {
			kept := p.pending[:0]
			for _, r := range p.pending {
				if r.matches(rel) {
					scope := fmt.Sprintf("rule for files matching %s", strings.Join(r.Globs, ", "))
					loaded = append(loaded, p.loadRule(r, scope)...)
					continue
				}
				kept = append(kept, r)
			}
			p.pending = kept
		}
	}
	p.later = append(p.later, loaded...)
	return renderInstructions(touchIntro, loaded)
}

const touchIntro = `Instructions that apply to files you just read or edited follow (AGENTS.md files of their folders and matching rules). Follow them for this work; they take precedence over your default behaviour.`

// nested loads the instruction files of the folders below the working
// directory down to path's folder, each folder once.
func (p *Project) nested(path string) []InstructionFile {
	dir := filepath.Dir(path)
	if dir == p.cwd || !within(p.cwd, dir) {
		return nil
	}
	var out []InstructionFile
	for _, d := range foldersDown(p.cwd, dir) {
		if p.checked[d] {
			continue
		}
		p.checked[d] = true
		if f := folderFile(d); f != "" {
			out = append(out, p.ld.load(f, "instructions for files under "+d)...)
		}
	}
	return out
}
