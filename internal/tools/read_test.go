package tools

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coda-cli/coda/internal/llm"
)

// ftEnv is an Env rooted at a new temporary directory.
func ftEnv(t testing.TB) *Env {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return NewEnv(dir)
}

// ftRun calls tool with in (a map or struct marshalled to JSON).
func ftRun(t testing.TB, tool Tool, env *Env, in any) Result {
	t.Helper()
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	return tool.Run(context.Background(), Call{ID: "toolu_test", Input: raw, Env: env})
}

// ftFile writes content to name (relative to the env's directory) and
// returns its absolute path.
func ftFile(t testing.TB, env *Env, name, content string) string {
	t.Helper()
	path := filepath.Join(env.Cwd(), name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func ftMustOK(t testing.TB, r Result) string {
	t.Helper()
	if r.IsError {
		t.Fatalf("unexpected error result: %s", r.Text())
	}
	return r.Text()
}

func ftMustFail(t testing.TB, r Result, wants ...string) string {
	t.Helper()
	if !r.IsError {
		t.Fatalf("expected an error result, got: %s", r.Text())
	}
	for _, w := range wants {
		if !strings.Contains(r.Text(), w) {
			t.Errorf("error %q does not mention %q", r.Text(), w)
		}
	}
	return r.Text()
}

func numbered(from int, lines ...string) string {
	var b strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&b, "%6d\t%s\n", from+i, l)
	}
	return b.String()
}

func TestReadNumbersLines(t *testing.T) {
	env := ftEnv(t)
	path := ftFile(t, env, "main.go", "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n")
	got := ftMustOK(t, ftRun(t, NewRead(), env, map[string]any{"file_path": path}))
	want := numbered(1, "package main", "", "func main() {", "\tprintln(\"hi\")", "}")
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	// A relative path resolves against the working directory.
	if rel := ftMustOK(t, ftRun(t, NewRead(), env, map[string]any{"file_path": "main.go"})); rel != want {
		t.Errorf("relative path read %q", rel)
	}
}

func TestReadOffsetAndLimit(t *testing.T) {
	env := ftEnv(t)
	var lines []string
	for i := 1; i <= 30; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	path := ftFile(t, env, "f.txt", strings.Join(lines, "\n")+"\n")
	got := ftMustOK(t, ftRun(t, NewRead(), env, map[string]any{"file_path": path, "offset": 10, "limit": 3}))
	if !strings.HasPrefix(got, numbered(10, "line 10", "line 11", "line 12")) {
		t.Errorf("window wrong:\n%s", got)
	}
	if !strings.Contains(got, "Showing lines 10-12 of 30") || !strings.Contains(got, "offset=13") {
		t.Errorf("no continuation note:\n%s", got)
	}
	// The last lines: no note.
	got = ftMustOK(t, ftRun(t, NewRead(), env, map[string]any{"file_path": path, "offset": 29}))
	if got != numbered(29, "line 29", "line 30") {
		t.Errorf("tail read %q", got)
	}
	got = ftMustOK(t, ftRun(t, NewRead(), env, map[string]any{"file_path": path, "offset": 31}))
	if !strings.Contains(got, "only 30 lines") {
		t.Errorf("offset past the end: %q", got)
	}
	ftMustFail(t, ftRun(t, NewRead(), env, map[string]any{"file_path": path, "offset": -1}), "negative")
	ftMustFail(t, ftRun(t, NewRead(), env, map[string]any{"file_path": path, "offset": "x"}), `"offset"`)
}

func TestReadLargeFile(t *testing.T) {
	env := ftEnv(t)
	var b strings.Builder
	for i := 1; i <= 200_000; i++ {
		fmt.Fprintf(&b, "row %d of the large file\n", i)
	}
	path := ftFile(t, env, "large.txt", b.String())
	start := time.Now()
	got := ftMustOK(t, ftRun(t, NewRead(), env, map[string]any{"file_path": path}))
	if strings.Count(got, "\n") < 2000 || !strings.Contains(got, "  2000\trow 2000 of the large file\n") || strings.Contains(got, "\trow 2001 ") {
		t.Errorf("default window is not the first 2000 lines")
	}
	if !strings.Contains(got, "Showing lines 1-2000 of 200000") || !strings.Contains(got, "offset=2001") {
		t.Errorf("missing note: %s", got[len(got)-200:])
	}
	got = ftMustOK(t, ftRun(t, NewRead(), env, map[string]any{"file_path": path, "offset": 199_999}))
	if got != numbered(199_999, "row 199999 of the large file", "row 200000 of the large file") {
		t.Errorf("end of the large file: %q", got)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("reading a 200k-line file took %v", d)
	}
	if !env.Files.Seen(path) {
		t.Error("a partial read was not recorded")
	}
}

func TestReadLongLinesAreCut(t *testing.T) {
	env := ftEnv(t)
	long := strings.Repeat("é", 2500) // two bytes each: cutting bytes would split one
	path := ftFile(t, env, "long.txt", "short\n"+long+"\nafter\n")
	got := ftMustOK(t, ftRun(t, NewRead(), env, map[string]any{"file_path": path}))
	lines := strings.Split(got, "\n")
	if lines[1] != "     2\t"+strings.Repeat("é", 2000)+"… [line truncated]" {
		t.Errorf("long line not cut at 2000 characters: %d bytes", len(lines[1]))
	}
	if lines[2] != "     3\tafter" || !strings.Contains(got, "longer than 2000 characters were truncated") {
		t.Errorf("got %q", got[len(got)-300:])
	}
	// A line far beyond the reader's buffer.
	path = ftFile(t, env, "huge-line.txt", strings.Repeat("x", 1<<20)+"\nnext\n")
	got = ftMustOK(t, ftRun(t, NewRead(), env, map[string]any{"file_path": path}))
	if !strings.Contains(got, "     2\tnext\n") || len(got) > 5000 {
		t.Errorf("1 MB line handled badly: %d bytes of output", len(got))
	}
}

func TestReadCRLFUnicodeAndInvalidUTF8(t *testing.T) {
	env := ftEnv(t)
	path := ftFile(t, env, "mixed.txt", "windows\r\nnaïve café 日本\r\nbad \xff byte\nno newline")
	got := ftMustOK(t, ftRun(t, NewRead(), env, map[string]any{"file_path": path}))
	want := numbered(1, "windows", "naïve café 日本", "bad \uFFFD byte", "no newline")
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestReadRefusesBinaryAndDirectories(t *testing.T) {
	env := ftEnv(t)
	path := ftFile(t, env, "prog.bin", "ELF\x00\x01\x02rest")
	ftMustFail(t, ftRun(t, NewRead(), env, map[string]any{"file_path": path}), "binary", "xxd")
	if env.Files.Seen(path) {
		t.Error("a refused binary file was recorded as read")
	}
	ftMustFail(t, ftRun(t, NewRead(), env, map[string]any{"file_path": env.Cwd()}), "directory", "Glob", "ls")
}

func TestReadEmptyFile(t *testing.T) {
	env := ftEnv(t)
	path := ftFile(t, env, "empty.txt", "")
	got := ftMustOK(t, ftRun(t, NewRead(), env, map[string]any{"file_path": path}))
	if !strings.Contains(got, "empty") {
		t.Errorf("empty file: %q", got)
	}
	if !env.Files.Seen(path) {
		t.Error("empty file not recorded")
	}
}

func TestReadMissingFileSuggestsSimilar(t *testing.T) {
	env := ftEnv(t)
	ftFile(t, env, "config.yaml", "a: 1\n")
	ftFile(t, env, "main.go", "package main\n")
	msg := ftMustFail(t, ftRun(t, NewRead(), env, map[string]any{"file_path": "config.yml"}), "does not exist")
	if !strings.Contains(msg, filepath.Join(env.Cwd(), "config.yaml")) {
		t.Errorf("no suggestion: %s", msg)
	}
	msg = ftMustFail(t, ftRun(t, NewRead(), env, map[string]any{"file_path": "mian.go"}))
	if !strings.Contains(msg, filepath.Join(env.Cwd(), "main.go")) {
		t.Errorf("no typo suggestion: %s", msg)
	}
	ftMustFail(t, ftRun(t, NewRead(), env, map[string]any{"file_path": "nodir/x.go"}), "directory", "does not exist either")
	msg = ftMustFail(t, ftRun(t, NewRead(), env, map[string]any{"file_path": "unrelated-name.rs"}))
	if strings.Contains(msg, "Did you mean") {
		t.Errorf("suggested an unrelated file: %s", msg)
	}
}

func TestReadSymlinkReadsTarget(t *testing.T) {
	env := ftEnv(t)
	target := ftFile(t, env, "real.txt", "real content\n")
	link := filepath.Join(env.Cwd(), "link.txt")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	got := ftMustOK(t, ftRun(t, NewRead(), env, map[string]any{"file_path": link}))
	if got != numbered(1, "real content") {
		t.Errorf("got %q", got)
	}
	// Reading through the link counts as reading the target.
	ftMustOK(t, ftRun(t, NewEdit(), env, map[string]any{"file_path": target, "old_string": "real", "new_string": "edited"}))
	data, _ := os.ReadFile(target)
	if string(data) != "edited content\n" {
		t.Errorf("target = %q", data)
	}
}

func TestReadConcurrently(t *testing.T) {
	env := ftEnv(t)
	var b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	path := ftFile(t, env, "shared.txt", b.String())
	want := ftMustOK(t, ftRun(t, NewRead(), env, map[string]any{"file_path": path}))
	var wg sync.WaitGroup
	results := make([]Result, 8)
	for i := range results {
		wg.Go(func() { results[i] = ftRun(t, NewRead(), env, map[string]any{"file_path": path}) })
	}
	wg.Wait()
	for i, r := range results {
		if r.IsError || r.Text() != want {
			t.Errorf("concurrent read %d differs", i)
		}
	}
}

func pngBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), uint8(x * y), 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReadImage(t *testing.T) {
	env := ftEnv(t)
	data := pngBytes(t, 16, 16)
	path := ftFile(t, env, "pic.png", string(data))
	r := ftRun(t, NewRead(), env, map[string]any{"file_path": path})
	ftMustOK(t, r)
	var img *llm.Image
	for _, b := range r.Content {
		if i, ok := b.(llm.Image); ok {
			img = &i
		}
	}
	if img == nil || img.MediaType != "image/png" {
		t.Fatalf("no PNG image block: %#v", r.Content)
	}
	if decoded, err := base64.StdEncoding.DecodeString(img.Data); err != nil || !bytes.Equal(decoded, data) {
		t.Error("image data does not round-trip")
	}
	if !strings.Contains(r.Text(), "PNG") {
		t.Errorf("text part: %q", r.Text())
	}
	// A PNG saved as .jpg is sent with its real type.
	jpgPath := ftFile(t, env, "really-png.jpg", string(data))
	r = ftRun(t, NewRead(), env, map[string]any{"file_path": jpgPath})
	if len(r.Content) != 2 || r.Content[1].(llm.Image).MediaType != "image/png" {
		t.Errorf("misnamed image: %#v", r.Content)
	}
	fake := ftFile(t, env, "fake.png", "this is text, not an image\n")
	ftMustFail(t, ftRun(t, NewRead(), env, map[string]any{"file_path": fake}), "not a PNG")
	big := ftFile(t, env, "big.png", string(data)+strings.Repeat("\x00", 4<<20))
	ftMustFail(t, ftRun(t, NewRead(), env, map[string]any{"file_path": big}), "MB", "smaller")
}

func TestFileToolsRefuseFIFOs(t *testing.T) {
	env := ftEnv(t)
	fifo := filepath.Join(env.Cwd(), "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// Opening a FIFO without a writer blocks: each of these must return.
	ftMustFail(t, ftRun(t, NewRead(), env, map[string]any{"file_path": fifo}), "not a regular file")
	ftMustFail(t, ftRun(t, NewWrite(), env, map[string]any{"file_path": fifo, "content": "x"}), "not a regular file")
	ftMustFail(t, ftRun(t, NewEdit(), env, map[string]any{"file_path": fifo, "old_string": "a", "new_string": "b"}), "not a regular file")
	for name, grep := range grepBackends(t) {
		r := ftRun(t, grep, env, map[string]any{"pattern": "x", "path": fifo})
		if !r.IsError {
			t.Errorf("%s: Grep on a FIFO: %s", name, r.Text())
		}
	}
	// Walking past a FIFO skips it.
	ftFile(t, env, "f.txt", "x\n")
	for name, grep := range grepBackends(t) {
		if got := ftMustOK(t, ftRun(t, grep, env, map[string]any{"pattern": "x"})); !strings.Contains(got, "f.txt") {
			t.Errorf("%s: %s", name, got)
		}
	}
}

func TestReadFileTooLargeToHash(t *testing.T) {
	env := ftEnv(t)
	var b strings.Builder
	for i := 1; b.Len() < binarySniffSize+1000; i++ {
		fmt.Fprintf(&b, "text line %d\n", i)
	}
	path := ftFile(t, env, "huge.log", b.String())
	// Extend it past the hashing limit without writing the bytes.
	if err := os.Truncate(path, readHashLimit+1<<20); err != nil {
		t.Fatal(err)
	}
	got := ftMustOK(t, ftRun(t, NewRead(), env, map[string]any{"file_path": path, "limit": 5}))
	if !strings.HasPrefix(got, numbered(1, "text line 1", "text line 2", "text line 3", "text line 4", "text line 5")) ||
		!strings.Contains(got, "has more. Read again with offset=6") {
		t.Errorf("got %q", got)
	}
	info, _ := os.Stat(path)
	if err := env.Files.CheckFresh(path, nil, info.ModTime()); err != nil {
		t.Errorf("unchanged file not fresh: %v", err)
	}
	// Without a hash, a new modification time means a change.
	if err := env.Files.CheckFresh(path, nil, info.ModTime().Add(time.Second)); err == nil {
		t.Error("a file too large to hash stayed fresh after its time changed")
	}
}
