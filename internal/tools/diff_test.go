package tools

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestUnifiedDiffFormat(t *testing.T) {
	cases := []struct {
		name, a, b, want string
	}{
		{"change in the middle", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n",
			"@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"},
		{"insertion at the start", "a\nb\n", "new\na\nb\n",
			"@@ -1,2 +1,3 @@\n+new\n a\n b\n"},
		{"deletion of everything", "a\nb\n", "",
			"@@ -1,2 +0,0 @@\n-a\n-b\n"},
		{"missing final newline", "a\nb", "a\nb\n",
			"@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"},
		{"two separate hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n", "x\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\ny\n",
			"@@ -1,4 +1,4 @@\n-1\n+x\n 2\n 3\n 4\n@@ -12,4 +12,4 @@\n 12\n 13\n 14\n-15\n+y\n"},
		{"close changes merge", "1\n2\n3\n4\n5\n6\n7\n8\n", "x\n2\n3\n4\n5\n6\n7\ny\n",
			"@@ -1,8 +1,8 @@\n-1\n+x\n 2\n 3\n 4\n 5\n 6\n 7\n-8\n+y\n"},
		{"single line", "x", "y", "@@ -1 +1 @@\n-x\n\\ No newline at end of file\n+y\n\\ No newline at end of file\n"},
	}
	for _, c := range cases {
		got, _, _ := unifiedDiff("old", "new", []byte(c.a), []byte(c.b))
		want := "--- old\n+++ new\n" + c.want
		if got != want {
			t.Errorf("%s:\ngot\n%s\nwant\n%s", c.name, got, want)
		}
	}
	if d, _, _ := unifiedDiff("a", "b", []byte("same\n"), []byte("same\n")); d != "" {
		t.Errorf("identical content produced %q", d)
	}
}

// applyDiff applies unified-diff hunks to a, as patch would.
func applyDiff(t *testing.T, a, diff string) string {
	t.Helper()
	lines := splitLines([]byte(a))
	var out []string
	next := 0 // index in lines of the next line not yet copied
	dl := strings.Split(strings.TrimSuffix(diff, "\n"), "\n")[2:]
	for i := 0; i < len(dl); i++ {
		h := dl[i]
		if !strings.HasPrefix(h, "@@ -") {
			t.Fatalf("expected a hunk header, got %q", h)
		}
		spec := strings.Fields(h)[1][1:] // "start,count" of the old file
		startS, countS, hasCount := strings.Cut(spec, ",")
		start, _ := strconv.Atoi(startS)
		if !hasCount || countS != "0" {
			start-- // to an index; an empty range names the line before it
		}
		for next < start {
			out = append(out, lines[next])
			next++
		}
		for i+1 < len(dl) && !strings.HasPrefix(dl[i+1], "@@ ") {
			i++
			l := dl[i]
			noEOL := i+1 < len(dl) && dl[i+1] == `\ No newline at end of file`
			text := l[1:]
			if !noEOL {
				text += "\n"
			}
			switch l[0] {
			case ' ':
				if lines[next] != text {
					t.Fatalf("context %q does not match line %d %q", text, next+1, lines[next])
				}
				out = append(out, text)
				next++
			case '-':
				if lines[next] != text {
					t.Fatalf("removed %q does not match line %d %q", text, next+1, lines[next])
				}
				next++
			case '+':
				out = append(out, text)
			}
			if noEOL {
				i++
			}
		}
	}
	out = append(out, lines[next:]...)
	return strings.Join(out, "")
}

func TestUnifiedDiffRoundTripsRandomEdits(t *testing.T) {
	diffTool, _ := exec.LookPath("diff")
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"a\n", "b\n", "c\n", "d\n", "e\n", "f\n"}
	random := func() string {
		var b strings.Builder
		for range rng.IntN(30) {
			b.WriteString(words[rng.IntN(len(words))])
		}
		if rng.IntN(5) == 0 {
			b.WriteString("tail")
		}
		return b.String()
	}
	for i := range 300 {
		a := random()
		b := a
		if i%3 != 0 {
			b = random()
		} else if len(a) > 4 {
			b = a[:len(a)/2] + "x\n" + a[len(a)/2:]
		}
		d, added, removed := unifiedDiff("a", "b", []byte(a), []byte(b))
		if a == b {
			continue
		}
		if got := applyDiff(t, a, d); got != b {
			t.Fatalf("case %d: applying the diff gave %q, want %q\n%s", i, got, b, d)
		}
		if diffTool == "" || i >= 60 { // each comparison starts a process
			continue
		}
		// A shortest edit script has as many additions and removals as
		// GNU diff --minimal finds.
		pa, pb := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		os.WriteFile(pa, []byte(a), 0o644)
		os.WriteFile(pb, []byte(b), 0o644)
		out, _ := exec.Command(diffTool, "--minimal", "-u", pa, pb).Output()
		wantAdded, wantRemoved := 0, 0
		for _, l := range strings.Split(string(out), "\n")[2:] {
			switch {
			case strings.HasPrefix(l, "+"):
				wantAdded++
			case strings.HasPrefix(l, "-"):
				wantRemoved++
			}
		}
		if added != wantAdded || removed != wantRemoved {
			t.Fatalf("case %d: +%d -%d, diff --minimal has +%d -%d\nours:\n%s\ntheirs:\n%s", i, added, removed, wantAdded, wantRemoved, d, out)
		}
	}
}

func TestUnifiedDiffFallsBackOnHugeChanges(t *testing.T) {
	var a, b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&a, "old %d\n", i)
		fmt.Fprintf(&b, "new %d\n", i)
	}
	d, added, removed := unifiedDiff("a", "b", []byte(a.String()), []byte(b.String()))
	if added != 5000 || removed != 5000 {
		t.Errorf("+%d -%d", added, removed)
	}
	if got := applyDiff(t, a.String(), d); got != b.String() {
		t.Error("fallback diff does not apply")
	}
}
