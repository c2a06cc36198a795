package tools

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/coda-cli/coda/internal/llm"
)

//go:embed read.md
var readDescription string

// Limits of one Read.
const (
	readDefaultLines = 2000
	readMaxLineChars = 2000
	// readHashLimit is the largest file whose content is hashed for the
	// file-state cache; larger files are only recorded by modification
	// time, and a changed time then means "changed".
	readHashLimit = 64 << 20
	// imageMaxEncoded bounds an image's base64 size, the API's limit.
	imageMaxEncoded = 5 << 20
	binarySniffSize = 8 << 10
)

// imageTypes are the image formats Read returns as images, by extension.
var imageTypes = map[string]string{
	".png":  "image/png",
	".jpg":  "image/jpeg",
	".jpeg": "image/jpeg",
	".gif":  "image/gif",
	".webp": "image/webp",
}

type readInput struct {
	FilePath string `json:"file_path" jsonschema_description:"Absolute path of the file to read (a relative path resolves against the working directory)."`
	Offset   int    `json:"offset,omitempty" jsonschema:"minimum=0" jsonschema_description:"Line number to start reading from, counting from 1. Only give it for files too long to read at once."`
	Limit    int    `json:"limit,omitempty" jsonschema:"minimum=0" jsonschema_description:"Number of lines to read (default 2000). Only give it for files too long to read at once."`
}

type readTool struct{}

// NewRead returns the Read tool: a file's lines, numbered, or an image.
func NewRead() Tool { return readTool{} }

// FileTools returns the file tools: Read, Write, Edit, Glob and Grep.
func FileTools() []Tool { return []Tool{NewRead(), NewWrite(), NewEdit(), NewGlob(), NewGrep()} }

func (readTool) Name() string                         { return "Read" }
func (readTool) Description() string                  { return readDescription }
func (readTool) InputSchema() json.RawMessage         { return SchemaFor[readInput]() }
func (readTool) ReadOnly() bool                       { return true }
func (readTool) ConcurrencySafe(json.RawMessage) bool { return true }

func (readTool) Run(ctx context.Context, call Call) Result {
	in, err := Decode[readInput](call.Input)
	if err != nil {
		return Errorf("Read: %v", err)
	}
	if in.FilePath == "" {
		return Errorf("Read: file_path is empty; give the path of the file to read")
	}
	if in.Offset < 0 || in.Limit < 0 {
		return Errorf("Read: offset and limit must not be negative (offset counts lines from 1)")
	}
	abs := call.Env.Abs(in.FilePath)
	info, err := os.Stat(abs)
	if err != nil {
		return missingFileError("Read", abs, err)
	}
	if info.IsDir() {
		return Errorf("Read: %s is a directory, not a file. Use Glob to find files in it, or `ls %s` with Bash to list it.", abs, abs)
	}
	if !info.Mode().IsRegular() {
		return notRegularError("Read", abs)
	}
	if mediaType, ok := imageTypes[strings.ToLower(filepath.Ext(abs))]; ok {
		return readImage(abs, info, mediaType)
	}
	return readText(ctx, call.Env, abs, in.Offset, in.Limit)
}

// missingFileError explains a failed stat, suggesting similar names that
// do exist in the same directory.
func missingFileError(tool, abs string, err error) Result {
	if !errors.Is(err, fs.ErrNotExist) {
		return Errorf("%s: cannot access %s: %v", tool, abs, err)
	}
	msg := fmt.Sprintf("%s: file does not exist: %s.", tool, abs)
	dir := filepath.Dir(abs)
	if _, err := os.Stat(dir); err != nil {
		return Errorf("%s The directory %s does not exist either.", msg, dir)
	}
	if similar := similarNames(dir, filepath.Base(abs)); len(similar) > 0 {
		return Errorf("%s Did you mean %s?", msg, strings.Join(similar, " or "))
	}
	return Errorf("%s Use Glob to search for it by name.", msg)
}

// notRegularError refuses devices, pipes and sockets: reading one could
// block forever or never end.
func notRegularError(tool, abs string) Result {
	return Errorf("%s: %s is not a regular file (it is a device, pipe or socket). Use Bash if you really need to read from it, with a timeout and a size limit (e.g. `head -c 4096`).", tool, abs)
}

// similarNames lists up to three entries of dir whose names are close to
// name: the same name in another case, the same stem with another
// extension, or a few typos away.
func similarNames(dir, name string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	type candidate struct {
		path  string
		score int
	}
	var found []candidate
	lower := strings.ToLower(name)
	stem := strings.TrimSuffix(lower, filepath.Ext(lower))
	for _, e := range entries {
		n := strings.ToLower(e.Name())
		score := -1
		switch {
		case n == lower:
			score = 0
		case strings.TrimSuffix(n, filepath.Ext(n)) == stem && stem != "":
			score = 1
		default:
			if d := editDistance(n, lower, 3); d <= typoAllowance(len(lower)) {
				score = 1 + d
			}
		}
		if score >= 0 {
			found = append(found, candidate{filepath.Join(dir, e.Name()), score})
		}
	}
	sort.SliceStable(found, func(i, j int) bool {
		if found[i].score != found[j].score {
			return found[i].score < found[j].score
		}
		return found[i].path < found[j].path
	})
	var out []string
	for i := 0; i < len(found) && i < 3; i++ {
		out = append(out, found[i].path)
	}
	return out
}

// typoAllowance is how many edits a name of n bytes may be from another
// and still look like a typo of it.
func typoAllowance(n int) int {
	switch {
	case n < 5:
		return 1
	case n < 12:
		return 2
	}
	return 3
}

// editDistance is the edit distance between a and b counting a swap of
// two neighbours as one edit (optimal string alignment), or limit+1 once
// it is certain to exceed limit.
func editDistance(a, b string, limit int) int {
	ra, rb := []rune(a), []rune(b)
	if d := len(ra) - len(rb); d > limit || -d > limit {
		return limit + 1
	}
	rows := [3][]int{make([]int, len(rb)+1), make([]int, len(rb)+1), make([]int, len(rb)+1)}
	prev2, prev, cur := rows[0], rows[1], rows[2]
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
			best = min(best, cur[j])
		}
		if best > limit {
			return limit + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return min(prev[len(rb)], limit+1)
}

func readImage(abs string, info fs.FileInfo, mediaType string) Result {
	if encoded := base64.StdEncoding.EncodedLen(int(info.Size())); encoded > imageMaxEncoded {
		return Errorf("Read: image %s is %s; images over %s (%s once encoded) cannot be sent to the model. Make a smaller copy with Bash (e.g. `convert in.png -resize 50%% /tmp/small.png`) and read that.",
			abs, formatSize(info.Size()), formatSize(imageMaxEncoded*3/4), formatSize(imageMaxEncoded))
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return Errorf("Read: read %s: %v", abs, err)
	}
	sniffed := http.DetectContentType(data)
	if sniffed != mediaType {
		if _, known := imageTypeNames[sniffed]; !known {
			return Errorf("Read: %s has an image extension but its content is not a PNG, JPEG, GIF or WebP image (it looks like %s). Use Bash (e.g. `file %s`) to see what it is.", abs, sniffed, abs)
		}
		mediaType = sniffed // trust the bytes over the name
	}
	text := fmt.Sprintf("Image %s (%s, %s)", abs, imageTypeNames[mediaType], formatSize(info.Size()))
	return Result{Content: []llm.Block{
		llm.Text{Text: text},
		llm.Image{MediaType: mediaType, Data: base64.StdEncoding.EncodeToString(data)},
	}}
}

var imageTypeNames = map[string]string{
	"image/png":  "PNG",
	"image/jpeg": "JPEG",
	"image/gif":  "GIF",
	"image/webp": "WebP",
}

func formatSize(n int64) string {
	switch {
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MB"
	case n >= 1<<10:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// readText streams the file: lines before offset are skipped, the window
// is formatted, and the rest is only counted (and hashed, for files small
// enough), so a huge file costs no more memory than the lines shown.
func readText(ctx context.Context, env *Env, abs string, offset, limit int) Result {
	f, err := os.Open(abs)
	if err != nil {
		return Errorf("Read: open %s: %v", abs, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return Errorf("Read: stat %s: %v", abs, err)
	}
	var h hash.Hash
	var src io.Reader = f
	if info.Size() <= readHashLimit {
		h = sha256.New()
		src = io.TeeReader(f, h)
	}
	r := bufio.NewReaderSize(src, 64<<10)
	head, _ := r.Peek(binarySniffSize)
	if bytes.IndexByte(head, 0) >= 0 {
		return Errorf("Read: %s is a binary file (%s), not text. Use Bash to inspect it, e.g. `file %s` or `xxd %s | head -50`.", abs, formatSize(info.Size()), abs, abs)
	}
	record := func(partial bool) {
		var sum [32]byte
		if h != nil {
			h.Sum(sum[:0])
		}
		env.Files.RecordHash(stateKey(abs), sum, info.ModTime(), partial)
	}
	if len(head) == 0 {
		record(false)
		return TextResult(fmt.Sprintf("The file %s exists but is empty.", abs))
	}

	if offset == 0 {
		offset = 1
	}
	if limit == 0 {
		limit = readDefaultLines
	}
	var out strings.Builder
	lineNo := 0
	truncated := false
	shownEnd := 0 // last line shown
	for {
		if lineNo%4096 == 0 && ctx.Err() != nil {
			return Errorf("Read: %v", ctx.Err())
		}
		inWindow := lineNo+1 >= offset && lineNo+1 < offset+limit
		line, ok, cut, err := readLine(r, inWindow)
		if err != nil {
			return Errorf("Read: read %s: %v", abs, err)
		}
		if !ok {
			break
		}
		lineNo++
		if !inWindow {
			if lineNo >= offset+limit {
				if h == nil {
					break // not hashing: no need to read on
				}
				// Past the window only the line count and the hash are
				// left to compute: read in bulk.
				n, err := countRemainingLines(r)
				if err != nil {
					return Errorf("Read: read %s: %v", abs, err)
				}
				lineNo += n
				break
			}
			continue
		}
		shownEnd = lineNo
		truncated = truncated || cut
		fmt.Fprintf(&out, "%6d\t%s", lineNo, line)
		if cut {
			out.WriteString("… [line truncated]")
		}
		out.WriteByte('\n')
	}
	// lineNo is the file's line count, except when a file too large to
	// hash stopped being read one line past the window.
	complete := h != nil
	record(offset > 1 || lineNo > shownEnd)
	if shownEnd == 0 {
		return TextResult(fmt.Sprintf("The file %s has only %d lines; offset %d is past its end. Read again with a smaller offset.", abs, lineNo, offset))
	}
	var notes []string
	if truncated {
		notes = append(notes, fmt.Sprintf("Lines longer than %d characters were truncated; to see more of line N use Bash, e.g. `sed -n 'Np' %s | cut -c%d-%d`.", readMaxLineChars, abs, readMaxLineChars+1, 2*readMaxLineChars))
	}
	switch {
	case complete && lineNo > shownEnd:
		notes = append(notes, fmt.Sprintf("Showing lines %d-%d of %d. Read again with offset=%d to continue.", offset, shownEnd, lineNo, shownEnd+1))
	case !complete && lineNo > shownEnd:
		notes = append(notes, fmt.Sprintf("Showing lines %d-%d; the file (%s) has more. Read again with offset=%d to continue.", offset, shownEnd, formatSize(info.Size()), shownEnd+1))
	}
	if len(notes) > 0 {
		out.WriteString("\n(" + strings.Join(notes, " ") + ")\n")
	}
	return TextResult(out.String())
}

// countRemainingLines reads r to its end and counts the lines in it.
func countRemainingLines(r io.Reader) (int, error) {
	buf := make([]byte, 64<<10)
	n := 0
	last := byte('\n')
	for {
		k, err := r.Read(buf)
		if k > 0 {
			n += bytes.Count(buf[:k], []byte{'\n'})
			last = buf[k-1]
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	if last != '\n' {
		n++ // a last line without a newline
	}
	return n, nil
}

// readLine reads one line without its line end (a trailing "\r" is dropped
// too). When keep is false the text is discarded. Lines longer than
// readMaxLineChars are cut (cut is true); ok is false at the end of input.
func readLine(r *bufio.Reader, keep bool) (line string, ok, cut bool, err error) {
	var buf []byte
	seen := false
	for {
		chunk, err := r.ReadSlice('\n')
		if len(chunk) > 0 {
			seen = true
		}
		if keep && len(buf) < 4*readMaxLineChars+4 {
			buf = append(buf, chunk...)
		} else if keep && len(chunk) > 0 {
			cut = true
		}
		switch {
		case err == nil:
			return finishLine(buf, keep, cut), true, isCut(buf, cut), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if !seen {
				return "", false, false, nil
			}
			return finishLine(buf, keep, cut), true, isCut(buf, cut), nil
		default:
			return "", false, false, err
		}
	}
}

func isCut(buf []byte, cut bool) bool {
	if cut {
		return true
	}
	buf = bytes.TrimSuffix(bytes.TrimSuffix(buf, []byte{'\n'}), []byte{'\r'})
	return utf8.RuneCount(buf) > readMaxLineChars
}

func finishLine(buf []byte, keep, cut bool) string {
	if !keep {
		return ""
	}
	buf = bytes.TrimSuffix(buf, []byte{'\n'})
	buf = bytes.TrimSuffix(buf, []byte{'\r'})
	if isCut(buf, cut) {
		n := 0
		for i := range string(buf) {
			if n == readMaxLineChars {
				buf = buf[:i]
				break
			}
			n++
		}
	}
	return strings.ToValidUTF8(string(buf), "\uFFFD")
}

// stateKey is the file-state key of a path: the file a symlink points to,
// so reading through a link and editing the target (or the reverse) are
// the same file.
func stateKey(abs string) string {
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		return resolved
	}
	return abs
}
