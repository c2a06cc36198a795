package session

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coda-cli/coda/internal/llm"
)

func TestProjectSlug(t *testing.T) {
	if got := ProjectSlug("/home/u/my.proj_x"); got != "-home-u-my-proj-x" {
		t.Errorf("slug %q", got)
	}
	long1 := "/" + strings.Repeat("a", 300) + "/one"
	long2 := "/" + strings.Repeat("a", 300) + "/two"
	s1, s2 := ProjectSlug(long1), ProjectSlug(long2)
	if len(s1) > 220 || s1 == s2 {
		t.Errorf("long slugs %d bytes, distinct %v", len(s1), s1 != s2)
	}
	home, project := t.TempDir(), t.TempDir()
	st := NewStore(home, project)
	if !strings.HasPrefix(st.Dir(), filepath.Join(home, ".coda", "projects")) || strings.HasPrefix(st.Dir(), project) {
		t.Errorf("sessions stored at %s", st.Dir())
	}
}

func TestOpenByPrefix(t *testing.T) {
	st, _, _ := testStore(t)
	for _, id := range []string{"20260101-000000-aaaa1111", "20260101-000000-aaaa2222", "20260102-000000-bbbb0000"} {
		sess, err := st.CreateWithID(id)
		if err != nil {
			t.Fatal(err)
		}
		mustAppend(t, sess, prompt("u-"+id, "hello"))
		sess.Close()
	}
	if id, err := st.Resolve("20260102"); err != nil || id != "20260102-000000-bbbb0000" {
		t.Errorf("unique prefix: %q %v", id, err)
	}
	if _, err := st.Resolve("20260101-000000-aaaa"); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("ambiguous prefix: %v", err)
	}
	if _, _, err := st.Open("2027"); !errors.Is(err, ErrNotFound) {
		t.Errorf("no match: %v", err)
	}
	if _, err := st.Load("../../etc/passwd"); !errors.Is(err, ErrNotFound) {
		t.Errorf("path as id: %v", err)
	}
	if _, err := st.CreateWithID("../x"); err == nil {
		t.Error("CreateWithID accepted a path")
	}
	if _, err := st.CreateWithID("20260102-000000-bbbb0000"); err == nil {
		t.Error("CreateWithID reused an existing id")
	}
	_, l := mustOpen(t, st, "20260102-0")
	if ids(l.Messages) != "u-20260102-000000-bbbb0000" {
		t.Errorf("open by prefix loaded %q", ids(l.Messages))
	}
}

func TestLockNamesTheHoldingProcess(t *testing.T) {
	st, home, project := testStore(t)
	sess := mustCreate(t, st)
	mustAppend(t, sess, prompt("u1", "hi"))
	sess.Close()

	child := startChild(t, "hold", home, project, sess.ID())
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Wait()
	defer stdin.Close()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "locked\n" {
		t.Fatalf("child: %q %v", line, err)
	}

	_, _, err = st.Open(sess.ID())
	var locked *LockedError
	if !errors.As(err, &locked) || locked.PID != child.Process.Pid {
		t.Fatalf("open of a held session: %v (want the holder's pid %d)", err, child.Process.Pid)
	}
	if !strings.Contains(err.Error(), fmt.Sprint(child.Process.Pid)) {
		t.Errorf("error does not name the pid: %v", err)
	}
	if err := st.Remove(sess.ID()); !errors.As(err, &locked) {
		t.Errorf("remove of a held session: %v", err)
	}
	old := time.Now().Add(-100 * 24 * time.Hour)
	os.Chtimes(sess.Path(), old, old)
	if n, err := st.Cleanup(0); n != 0 || err != nil {
		t.Errorf("cleanup removed %d held sessions (%v)", n, err)
	}
	// The offered way out: a fork, while the original stays held.
	fork, l, err := st.Fork(sess.ID())
	if err != nil {
		t.Fatal(err)
	}
	if ids(l.Messages) != "u1" {
		t.Errorf("fork of a held session has %q", ids(l.Messages))
	}
	fork.Close()

	stdin.Close()
	if err := child.Wait(); err != nil {
		t.Fatal(err)
	}
	s2, _ := mustOpen(t, st, sess.ID())
	s2.Close()
}

func TestForkLeavesOriginalUntouched(t *testing.T) {
	st, _, project := testStore(t)
	sess := mustCreate(t, st)
	mustAppend(t, sess, prompt("u1", "edit a.txt"))
	file := filepath.Join(project, "a.txt")
	writeFile(t, file, "before\n")
	if err := sess.Checkpoint("u1", file); err != nil {
		t.Fatal(err)
	}
	writeFile(t, file, "after\n")
	if err := sess.RecordWrite("u1", file); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, sess, reply("a1", "edited"))
	sess.Append(Record{Type: "from-the-future", Title: "keep me"})
	sess.Close()
	// Damage the original's end, as a crash would.
	f, _ := os.OpenFile(sess.Path(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("garbage\n{\"type\":\"message\",\"ts\":")
	f.Close()
	before := readFile(t, sess.Path())

	fork, l, err := st.Fork(sess.ID())
	if err != nil {
		t.Fatal(err)
	}
	defer fork.Close()
	if fork.ID() == sess.ID() {
		t.Fatal("fork kept the id")
	}
	if readFile(t, sess.Path()) != before {
		t.Error("fork changed the original transcript")
	}
	if ids(l.Messages) != "u1 a1" || l.Unknown != 1 || l.Skipped != 0 {
		t.Errorf("fork loaded %q unknown %d skipped %d", ids(l.Messages), l.Unknown, l.Skipped)
	}
	if !strings.Contains(readFile(t, fork.Path()), `"from-the-future"`) {
		t.Error("fork dropped the unknown record")
	}
	// The fork carries the checkpoints: it can rewind the file alone.
	if restored, err := fork.RewindCode("u1", false); err != nil || len(restored) != 1 {
		t.Fatalf("rewind in fork: %v %v", restored, err)
	}
	if readFile(t, file) != "before\n" {
		t.Error("fork's rewind did not restore the file")
	}
	if readFile(t, sess.Path()) != before {
		t.Error("rewinding the fork changed the original transcript")
	}
}

func TestListAndLatest(t *testing.T) {
	st, _, project := testStore(t)
	writeFile(t, filepath.Join(project, ".git", "HEAD"), "ref: refs/heads/feature/x\n")

	a := mustCreate(t, st)
	long := "Please refactor   the session store so that\nlisting is fast, and also make sure that nothing is ever lost"
	mustAppend(t, a, llm.Message{ID: "r", Role: llm.RoleUser, Blocks: []llm.Block{llm.Text{Text: "<reminder>"}}, Meta: llm.Meta{Reminder: true}},
		prompt("a1", long), reply("a2", "ok"))
	a.Close()

	b := mustCreate(t, st)
	mustAppend(t, b, prompt("b1", "short one"), reply("b2", "ok"), prompt("b3", "more"))
	b.Append(Record{Type: TypeTitle, Title: "Custom title"})
	b.Close()

	empty := mustCreate(t, st) // open, no messages yet: listed, never Latest

	infos, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 3 || infos[0].ID != empty.ID() || infos[1].ID != b.ID() || infos[2].ID != a.ID() {
		t.Fatalf("list order %+v", infos)
	}
	ia, ib := infos[2], infos[1]
	if ia.Title != "Please refactor the session store so that listing is fast,…" {
		t.Errorf("title from prompt %q", ia.Title)
	}
	if ib.Title != "Custom title" || ib.Messages != 3 || ia.Messages != 3 {
		t.Errorf("b: %q %d messages; a: %d messages", ib.Title, ib.Messages, ia.Messages)
	}
	if fi, _ := os.Stat(a.Path()); ia.Size != fi.Size() || ia.GitBranch != "feature/x" || ia.LastActivity.IsZero() {
		t.Errorf("a: size %d (file %d) branch %q activity %v", ia.Size, fi.Size(), ia.GitBranch, ia.LastActivity)
	}
	if id, err := st.Latest(); err != nil || id != b.ID() {
		t.Errorf("latest %q %v, want %s", id, err, b.ID())
	}

	// Resuming the older one makes it the latest; the listing follows
	// what was appended, including a rewind.
	sa, _ := mustOpen(t, st, a.ID())
	mustAppend(t, sa, prompt("a3", "again"), reply("a4", "sure"))
	if _, err := sa.RewindConversation("a3"); err != nil {
		t.Fatal(err)
	}
	sa.Sync()
	infos, _ = st.List()
	if infos[0].ID != a.ID() || infos[0].Messages != 3 {
		t.Errorf("after resume and rewind: %+v", infos[0])
	}
	if id, _ := st.Latest(); id != a.ID() {
		t.Errorf("latest after resume %q", id)
	}
	sa.Close()
	empty.Close()
}

func TestListIndexStaysCorrect(t *testing.T) {
	st, _, _ := testStore(t)
	sess := mustCreate(t, st)
	mustAppend(t, sess, prompt("u1", "first prompt"), reply("a1", "x"))
	list := func() Info {
		t.Helper()
		infos, err := st.List()
		if err != nil || len(infos) != 1 {
			t.Fatalf("list: %v %v", infos, err)
		}
		return infos[0]
	}
	if in := list(); in.Messages != 2 {
		t.Fatalf("messages %d", in.Messages)
	}
	if _, err := os.Stat(filepath.Join(sess.Dir(), indexFile)); err != nil {
		t.Fatalf("no index written: %v", err)
	}
	// Appended since the index: counted.
	mustAppend(t, sess, prompt("u2", "second"), reply("a2", "y"))
	if in := list(); in.Messages != 4 || in.Title != "first prompt" {
		t.Errorf("after append: %+v", in)
	}
	sess.Close()

	// Rewritten behind the index's back (shorter, different): reread.
	writeFile(t, sess.Path(), msgLine(t, prompt("z1", "replaced")))
	if in := list(); in.Messages != 1 || in.Title != "replaced" {
		t.Errorf("after rewrite: %+v", in)
	}
	// A damaged index is ignored.
	writeFile(t, filepath.Join(sess.Dir(), indexFile), "{not json")
	if in := list(); in.Messages != 1 || in.Title != "replaced" {
		t.Errorf("with damaged index: %+v", in)
	}
}

func TestRemoveAndCleanup(t *testing.T) {
	st, _, _ := testStore(t)
	make3 := func(text string) *Session {
		s := mustCreate(t, st)
		mustAppend(t, s, prompt("u", text))
		os.MkdirAll(filepath.Join(s.Dir(), "tool-results"), 0o700)
		s.Close()
		return s
	}
	old, recent, gone := make3("old"), make3("recent"), make3("gone")

	if err := st.Remove(gone.ID()); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{gone.Path(), gone.Dir(), filepath.Join(st.Dir(), gone.ID()+".lock")} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("remove left %s", p)
		}
	}
	if err := st.Remove(gone.ID()); !errors.Is(err, ErrNotFound) {
		t.Errorf("second remove: %v", err)
	}

	long := time.Now().Add(-31 * 24 * time.Hour)
	os.Chtimes(old.Path(), long, long)
	n, err := st.Cleanup(0)
	if err != nil || n != 1 {
		t.Fatalf("cleanup removed %d (%v), want 1", n, err)
	}
	if _, err := os.Stat(old.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Error("old session kept")
	}
	if _, err := os.Stat(old.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Error("old session's folder kept")
	}
	if _, err := os.Stat(recent.Path()); err != nil {
		t.Error("recent session removed")
	}
	// Leftovers of sessions that are gone go too, uncounted.
	orphanDir, orphanLock := filepath.Join(st.Dir(), "20200101-000000-dead"), filepath.Join(st.Dir(), "20200101-000000-beef.lock")
	writeFile(t, filepath.Join(orphanDir, "index.json"), "{}")
	writeFile(t, orphanLock, "123\n")
	for _, p := range []string{orphanDir, orphanLock} {
		os.Chtimes(p, long, long)
	}
	if n, err := st.Cleanup(0); n != 0 || err != nil {
		t.Errorf("cleanup of leftovers counted %d (%v)", n, err)
	}
	for _, p := range []string{orphanDir, orphanLock} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("cleanup left %s", p)
		}
	}
	if n, _ := st.Cleanup(time.Nanosecond); n != 1 {
		t.Errorf("cleanup with a tiny age removed %d", n)
	}
}
