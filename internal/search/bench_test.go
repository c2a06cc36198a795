package search

import (
	"context"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

func goroot(b *testing.B) string {
	b.Helper()
	return filepath.Join(runtime.GOROOT(), "src")
}

func benchSearch(b *testing.B, pattern string) {
	root := goroot(b)
	o := Options{Pattern: pattern, Mode: Content, LineNumbers: true, MaxColumns: 500}
	for b.Loop() {
		lines := 0
		if err := Search(context.Background(), root, o, func([]byte) bool { lines++; return true }); err != nil {
			b.Fatal(err)
		}
		if lines == 0 {
			b.Fatal("no matches")
		}
	}
}

func benchRg(b *testing.B, pattern string) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		b.Skip("rg not installed")
	}
	root := goroot(b)
	o := Options{Pattern: pattern, Mode: Content, LineNumbers: true, MaxColumns: 500}
	for b.Loop() {
		cmd := exec.Command(rg, RgArgs(root, o)...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil || len(out) == 0 {
			b.Fatal(err)
		}
	}
}

const (
	benchLiteral = "ErrUnexpectedEOF"
	benchRegex   = `func \(\w+ \*?\w+\) Close\(\)`
)

func BenchmarkSearchLiteral(b *testing.B) { benchSearch(b, benchLiteral) }
func BenchmarkSearchRegex(b *testing.B)   { benchSearch(b, benchRegex) }
func BenchmarkRgLiteral(b *testing.B)     { benchRg(b, benchLiteral) }
func BenchmarkRgRegex(b *testing.B)       { benchRg(b, benchRegex) }

// benchRgPlain runs rg as a user would, with its defaults (all threads,
// unsorted output): the reference the issue names.
func benchRgPlain(b *testing.B, pattern string) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		b.Skip("rg not installed")
	}
	root := goroot(b)
	for b.Loop() {
		cmd := exec.Command(rg, "-n", "--", pattern, root)
		out, err := cmd.Output()
		if err != nil || len(out) == 0 {
			b.Fatal(err)
		}
	}
}

func BenchmarkRgPlainLiteral(b *testing.B) { benchRgPlain(b, benchLiteral) }
func BenchmarkRgPlainRegex(b *testing.B)   { benchRgPlain(b, benchRegex) }
