package session

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// toolWrite does what a file tool does: checkpoint, change, report back.
// nil content deletes the file.
func toolWrite(t *testing.T, sess *Session, promptID, path string, content []byte) {
	t.Helper()
	if err := sess.Checkpoint(promptID, path); err != nil {
		t.Fatal(err)
	}
	if content == nil {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	} else {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := sess.RecordWrite(promptID, path); err != nil {
		t.Fatal(err)
	}
}

// fileState is a file's bytes and mode, or its absence.
type fileState struct {
	exists  bool
	content string
	mode    os.FileMode
}

func snapshot(t *testing.T, paths ...string) map[string]fileState {
	t.Helper()
	out := make(map[string]fileState)
	for _, p := range paths {
		fi, err := os.Stat(p)
		if errors.Is(err, os.ErrNotExist) {
			out[p] = fileState{}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out[p] = fileState{exists: true, content: readFile(t, p), mode: fi.Mode().Perm()}
	}
	return out
}

func TestRewindCodeRestoresEveryChange(t *testing.T) {
	st, _, project := testStore(t)
	sess := mustCreate(t, st)
	path := func(name string) string { return filepath.Join(project, name) }
	a, bin, created, deleted, nested, keep, keep2 := path("a.txt"), path("bin.dat"), path("new.txt"), path("del.txt"), path("sub/dir/n.txt"), path("keep.txt"), path("z.txt")
	all := []string{a, bin, created, deleted, nested, keep, keep2}

	writeFile(t, a, "v0\n")
	writeFile(t, keep, "the user's own file\n")
	writeFile(t, keep2, "emptied later\n")
	writeFile(t, deleted, "precious\n")
	os.Chmod(deleted, 0o600)
	if err := os.WriteFile(bin, []byte{0, 1, 2, 0xff, '\r', '\n', 0}, 0o755); err != nil {
		t.Fatal(err)
	}
	s0 := snapshot(t, all...)

	mustAppend(t, sess, prompt("p1", "first"))
	toolWrite(t, sess, "p1", a, []byte("v1\n"))
	mustAppend(t, sess, reply("r1", "ok"))
	s1 := snapshot(t, all...)

	mustAppend(t, sess, prompt("p2", "second"))
	toolWrite(t, sess, "p2", a, []byte("v2\n"))
	toolWrite(t, sess, "p2", a, []byte("v3\n"))
	toolWrite(t, sess, "p2", created, []byte("brand new\n"))
	toolWrite(t, sess, "p2", deleted, nil)
	// A tool that checkpointed and then failed leaves the file as it was.
	if err := sess.Checkpoint("p2", keep); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, sess, reply("r2", "ok"))
	s2 := snapshot(t, all...)

	mustAppend(t, sess, prompt("p3", "third"))
	toolWrite(t, sess, "p3", a, []byte("v4\n"))
	toolWrite(t, sess, "p3", bin, []byte{9, 9, 9})
	toolWrite(t, sess, "p3", nested, []byte("deep\n"))
	toolWrite(t, sess, "p3", keep2, []byte{}) // a Write that empties a file
	mustAppend(t, sess, reply("r3", "ok"))

	restored, err := sess.RewindCode("p3", false)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{a, bin, nested, keep2}; !reflect.DeepEqual(restored, want) {
		t.Errorf("restored %v, want %v", restored, want)
	}
	if got := snapshot(t, all...); !reflect.DeepEqual(got, s2) {
		t.Errorf("rewind to p3:\n got %v\nwant %v", got, s2)
	}

	restored, err = sess.RewindCode("p1", false)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{a, deleted, created}; !reflect.DeepEqual(restored, want) {
		t.Errorf("restored %v, want %v", restored, want)
	}
	if got := snapshot(t, all...); !reflect.DeepEqual(got, s0) {
		t.Errorf("rewind to p1:\n got %v\nwant %v", got, s0)
	}
	sess.Close()

	// The checkpoints live in the session: a resumed process rewinds too,
	// and knows the files now hold what the last rewind wrote.
	sess, _ = mustOpen(t, st, sess.ID())
	if _, err := sess.RewindCode("p2", false); err != nil {
		t.Fatal(err)
	}
	if got := snapshot(t, all...); !reflect.DeepEqual(got, s1) {
		t.Errorf("rewind to p2 after resume:\n got %v\nwant %v", got, s1)
	}
	if _, err := sess.RewindCode("nope", false); err == nil {
		t.Error("rewind to an unknown prompt succeeded")
	}
}

func TestRewindCodeRefusesUserChanges(t *testing.T) {
	st, _, project := testStore(t)
	sess := mustCreate(t, st)
	a, b := filepath.Join(project, "a.txt"), filepath.Join(project, "b.txt")
	writeFile(t, a, "a0\n")
	writeFile(t, b, "b0\n")
	mustAppend(t, sess, prompt("p1", "edit both"))
	toolWrite(t, sess, "p1", a, []byte("a1\n"))
	toolWrite(t, sess, "p1", b, []byte("b1\n"))
	writeFile(t, b, "b1 plus the user's edit\n")

	restored, err := sess.RewindCode("p1", false)
	var conflict *ConflictError
	if !errors.As(err, &conflict) || !reflect.DeepEqual(conflict.Paths, []string{b}) || restored != nil {
		t.Fatalf("rewind over a user edit: %v %v", restored, err)
	}
	if readFile(t, a) != "a1\n" || readFile(t, b) != "b1 plus the user's edit\n" {
		t.Error("a refused rewind changed files")
	}

	restored, err = sess.RewindCode("p1", true)
	if err != nil || len(restored) != 2 {
		t.Fatalf("forced rewind: %v %v", restored, err)
	}
	if readFile(t, a) != "a0\n" || readFile(t, b) != "b0\n" {
		t.Error("forced rewind did not restore both files")
	}

	// A file deleted by the user after the agent created it is a change too.
	c := filepath.Join(project, "c.txt")
	mustAppend(t, sess, prompt("p2", "create c"))
	toolWrite(t, sess, "p2", c, []byte("c\n"))
	os.Remove(c)
	if _, err := sess.RewindCode("p2", false); !errors.As(err, &conflict) {
		t.Errorf("rewind over a user's delete: %v", err)
	}
}
