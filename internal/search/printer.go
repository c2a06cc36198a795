package search

import (
	"bytes"
	"strconv"
)

// output collects one file's output lines.
type output struct {
	data []byte
	ends []int // end offset of each line in data
}

func (o *output) endLine() { o.ends = append(o.ends, len(o.data)) }

func (o *output) line(i int) []byte {
	start := 0
	if i > 0 {
		start = o.ends[i-1]
	}
	return o.data[start:o.ends[i]]
}

// printer writes one file's matching lines in rg's --no-heading format:
// "path:line:text" for matches, "path-line-text" for context lines, and
// "--" between groups that are not adjacent. It works on a buffer of whole
// lines; for files searched in chunks, rebase carries its state over.
type printer struct {
	out         *output
	path        []byte
	lineNumbers bool
	before      int
	after       int
	maxColumns  int

	buf       []byte
	knownOff  int // a line start in buf ...
	knownLine int // ... and its line number
	printed   bool
	lastEnd   int // offset just past the last printed line (-1: before buf)
	lastLine  int // number of the line after the last printed line
	afterLeft int // context lines still owed after the last match
}

// reset points the printer at a buffer whose first line is number line.
func (p *printer) reset(buf []byte, line int) {
	p.buf, p.knownOff, p.knownLine = buf, 0, line
	p.lastEnd = -1
}

// rebase moves to a new buffer whose first shift bytes and lines were the
// last ones of the previous buffer (the before-context overlap).
func (p *printer) rebase(buf []byte, shift, firstLine int) {
	if p.lastEnd >= 0 {
		p.lastEnd -= shift
		if p.lastEnd < 0 {
			p.lastEnd = -1
		}
	}
	p.buf, p.knownOff, p.knownLine = buf, 0, firstLine
}

// lineNumber returns the number of the line starting at off, which must
// not precede the last offset asked about.
func (p *printer) lineNumber(off int) int {
	p.knownLine += bytes.Count(p.buf[p.knownOff:off], []byte{'\n'})
	p.knownOff = off
	return p.knownLine
}

// match prints the matching range [start, end) of whole lines with the
// context around it.
func (p *printer) match(start, end int) {
	n := p.lineNumber(start)
	p.flushAfter(start)
	floor := 0
	if p.lastEnd > 0 {
		floor = p.lastEnd
	}
	bs, bn := start, n
	for k := 0; k < p.before && bs > floor; k++ {
		bs = lineStart(p.buf, bs-1)
		bn--
	}
	if p.printed && (p.before > 0 || p.after > 0) && bn > p.lastLine {
		p.separator()
	}
	for off := bs; off < start; bn++ {
		off = p.printLine(off, bn, '-')
	}
	for off := start; off < end; n++ {
		off = p.printLine(off, n, ':')
	}
	p.lastEnd, p.lastLine, p.afterLeft = end, n, p.after
}

// flushAfter prints owed after-context lines that start before limit.
func (p *printer) flushAfter(limit int) {
	for p.afterLeft > 0 && p.lastEnd >= 0 && p.lastEnd < limit {
		p.lastEnd = p.printLine(p.lastEnd, p.lastLine, '-')
		p.lastLine++
		p.afterLeft--
	}
}

// finish prints the after-context left at the end of the buffer.
func (p *printer) finish() { p.flushAfter(len(p.buf)) }

func (p *printer) separator() {
	p.out.data = append(p.out.data, "--"...)
	p.out.endLine()
}

// printLine prints the line starting at off and returns the next line's
// offset.
func (p *printer) printLine(off, n int, sep byte) int {
	end := lineEnd(p.buf, off)
	next := end
	if end < len(p.buf) {
		next++
	}
	o := p.out
	o.data = append(o.data, p.path...)
	o.data = append(o.data, sep)
	if p.lineNumbers {
		o.data = strconv.AppendInt(o.data, int64(n), 10)
		o.data = append(o.data, sep)
	}
	switch {
	case p.maxColumns > 0 && next-off > p.maxColumns && sep == ':':
		o.data = append(o.data, "[Omitted long matching line]"...)
	case p.maxColumns > 0 && next-off > p.maxColumns:
		o.data = append(o.data, "[Omitted long context line]"...)
	default:
		o.data = append(o.data, p.buf[off:end]...)
	}
	o.endLine()
	p.printed = true
	return next
}
