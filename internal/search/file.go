package search

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// searcher holds what every file's search shares.
type searcher struct {
	opts Options
	m    *matcher
	// chunkSize is the size above which a file is searched in pieces of
	// about that size instead of read whole (never in multiline mode,
	// where a match may span the whole file).
	chunkSize int
}

// fileJob is one file to search; explicit files were named as the search
// root rather than found by walking.
type fileJob struct {
	seq      int
	path     string
	explicit bool
}

// searchFile searches one file into out. buf is the worker's reusable
// read buffer; the grown buffer is returned. Unreadable files are skipped,
// as rg skips them (it also prints a message, which the tool does not
// show).
func (s *searcher) searchFile(job fileJob, buf []byte, out *output) []byte {
	f, size, isDir, err := openFile(job.path)
	if err != nil {
		return buf
	}
	defer f.Close()
	if isDir {
		return buf
	}
	if !s.opts.Multiline && size > int64(s.chunkSize) {
		return s.searchChunks(f, job, buf, out)
	}
	data, buf, err := readAll(f, size, buf)
	if err != nil {
		return buf
	}
	data = decodeText(data)
	if i := bytes.IndexByte(data, 0); i >= 0 {
		if job.explicit {
			s.searchBinary(job.path, data, i, out)
		}
		// A file found by walking that holds a NUL byte is binary: rg
		// stops searching it at the NUL, and here it is skipped whole.
		return buf
	}
	s.searchBuffer(job.path, data, out)
	return buf
}

// readAll reads the rest of f, reusing buf. A short read that reaches the
// size the file had when opened ends it: that is the end of a regular
// file, and trusting it saves one system call per file.
func readAll(f *rawFile, size int64, buf []byte) ([]byte, []byte, error) {
	if need := int(size) + 1; cap(buf) < need {
		buf = make([]byte, 0, need)
	}
	data := buf[:0]
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		want := cap(data) - len(data)
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if errors.Is(err, io.EOF) || (err == nil && n < want && int64(len(data)) >= size) {
			return data, data[:0], nil
		}
		if err != nil {
			return nil, data[:0], err
		}
	}
}

// decodeText drops a UTF-8 byte order mark and converts UTF-16 text with
// a byte order mark to UTF-8, as rg does before searching.
func decodeText(data []byte) []byte {
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		return data[3:]
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}):
		return utf16ToUTF8(data[2:], false)
	case bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		return utf16ToUTF8(data[2:], true)
	}
	return data
}

func utf16ToUTF8(b []byte, bigEndian bool) []byte {
	units := make([]uint16, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		if bigEndian {
			units = append(units, uint16(b[i])<<8|uint16(b[i+1]))
		} else {
			units = append(units, uint16(b[i+1])<<8|uint16(b[i]))
		}
	}
	out := make([]byte, 0, len(units))
	for _, r := range utf16.Decode(units) {
		out = utf8.AppendRune(out, r)
	}
	return out
}

// searchBuffer searches a whole file held in data.
func (s *searcher) searchBuffer(path string, data []byte, out *output) {
	switch s.opts.Mode {
	case FilesWithMatches:
		found := false
		s.m.eachMatch(data, 0, func(int, int) bool { found = true; return false })
		if found {
			out.data = append(out.data, path...)
			out.endLine()
		}
	case Count:
		n := 0
		s.m.eachMatch(data, 0, func(int, int) bool { n++; return true })
		writeCount(out, path, n)
	default:
		p := s.newPrinter(path, out)
		p.reset(data, 1)
		s.m.eachMatch(data, 0, func(start, end int) bool { p.match(start, end); return true })
		p.finish()
	}
}

func (s *searcher) newPrinter(path string, out *output) *printer {
	return &printer{
		out:         out,
		path:        []byte(path),
		lineNumbers: s.opts.LineNumbers,
		before:      s.opts.Before,
		after:       s.opts.After,
		maxColumns:  s.opts.MaxColumns,
	}
}

func writeCount(out *output, path string, n int) {
	if n == 0 {
		return
	}
	out.data = append(out.data, path...)
	out.data = append(out.data, ':')
	out.data = strconv.AppendInt(out.data, int64(n), 10)
	out.endLine()
}

// searchBinary handles a binary file named explicitly. Like rg, it counts
// and lists it as text, but instead of printing binary lines it reports
// that the file matches.
func (s *searcher) searchBinary(path string, data []byte, nul int, out *output) {
	if s.opts.Mode != Content {
		s.searchBuffer(path, data, out)
		return
	}
	found := false
	s.m.eachMatch(data, 0, func(int, int) bool { found = true; return false })
	if found {
		out.data = fmt.Appendf(out.data, "%s: binary file matches (found \"\\0\" byte around offset %d)", path, nul)
		out.endLine()
	}
}

// searchChunks searches a large file a piece at a time. Each piece ends at
// a line end and begins with the last Before lines of the previous piece,
// so context never needs a line that is no longer in memory.
func (s *searcher) searchChunks(f *rawFile, job fileJob, buf []byte, out *output) []byte {
	if cap(buf) < 2*s.chunkSize {
		buf = make([]byte, 0, 2*s.chunkSize)
	}
	data := buf[:0]
	var p *printer
	if s.opts.Mode == Content {
		p = s.newPrinter(job.path, out)
	}
	count := 0
	firstLine := 1 // number of data's first line
	searchFrom := 0
	first := true
	eof := false
	for !eof {
		// Fill up to chunkSize more bytes.
		for n := 0; n < s.chunkSize && !eof; {
			if len(data) == cap(data) {
				data = append(data, 0)[:len(data)]
			}
			k, err := f.Read(data[len(data):min(cap(data), len(data)+s.chunkSize-n)])
			data, n = data[:len(data)+k], n+k
			if err != nil {
				eof = true
			}
		}
		if first {
			// Only a UTF-8 byte order mark is handled here; UTF-16 files
			// this large are searched as they are.
			data = bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF})
			first = false
		}
		// Search only whole lines; keep a trailing partial line for later.
		end := len(data)
		if !eof {
			end = bytes.LastIndexByte(data, '\n') + 1
			if end <= searchFrom {
				continue // one line longer than the chunk: read more
			}
		}
		chunk := data[:end]
		if bytes.IndexByte(chunk[searchFrom:], 0) >= 0 {
			// Binary data: stop at the NUL, keeping what came before,
			// as rg does.
			break
		}
		stop := false
		switch s.opts.Mode {
		case FilesWithMatches:
			s.m.eachMatch(chunk, searchFrom, func(int, int) bool { stop = true; return false })
			if stop {
				out.data = append(out.data, job.path...)
				out.endLine()
			}
		case Count:
			s.m.eachMatch(chunk, searchFrom, func(int, int) bool { count++; return true })
		default:
			if firstLine == 1 && searchFrom == 0 {
				p.reset(chunk, 1)
			}
			p.buf = chunk
			s.m.eachMatch(chunk, searchFrom, func(start, end int) bool { p.match(start, end); return true })
			p.finish()
		}
		if stop || eof {
			break
		}
		// Keep the last Before lines as the next chunk's overlap.
		keep := end
		for k := 0; k < s.opts.Before && keep > 0; k++ {
			keep = lineStart(chunk, keep-1)
		}
		dropped := bytes.Count(chunk[:keep], []byte{'\n'})
		rest := copy(data, data[keep:])
		data = data[:rest]
		searchFrom = end - keep
		firstLine += dropped
		if p != nil {
			p.rebase(data, keep, firstLine)
		}
	}
	if s.opts.Mode == Count {
		writeCount(out, job.path, count)
	}
	return data[:0]
}
