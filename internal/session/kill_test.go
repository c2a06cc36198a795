package session

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"
)

// TestSurvivesKill runs a child that appends to a session in a loop and
// SIGKILLs it at random points, many times over. Every load must succeed
// and hold every message the child had finished writing, in order; every
// resume must continue cleanly after whatever the kill left. Lanes of
// rounds run side by side: a child spends most of its life starting up.
func TestSurvivesKill(t *testing.T) {
	const lanes, rounds = 4, 4
	for lane := range lanes {
		t.Run(fmt.Sprint("lane", lane), func(t *testing.T) {
			t.Parallel()
			survivesKill(t, rounds, uint64(lane))
		})
	}
}

func survivesKill(t *testing.T, rounds int, seed uint64) {
	st, home, project := testStore(t)
	sess := mustCreate(t, st)
	mustAppend(t, sess, killMessage(0))
	sess.Close()

	rng := rand.New(rand.NewPCG(seed, uint64(time.Now().UnixNano())))
	acked := -1 // highest finished tool round trip the children reported
	for round := range rounds {
		acked = max(acked, killChildAtRandom(t, rng, home, project, sess.ID()))

		l, err := st.Load(sess.ID())
		if err != nil {
			t.Fatalf("round %d: load after kill: %v", round, err)
		}
		if len(l.Messages) < 3*(acked+1) {
			t.Fatalf("round %d: %d messages, but round trip %d was acknowledged", round, len(l.Messages), acked)
		}
		for i, m := range l.Messages {
			want := killMessage(i)
			if m.ID != want.ID || m.Text() != want.Text() {
				t.Fatalf("round %d: message %d is %q, want %q", round, i, m.ID, want.ID)
			}
		}
		if l.Skipped > (round+1)/2 || l.Dropped > 1 {
			t.Fatalf("round %d: skipped %d dropped %d", round, l.Skipped, l.Dropped)
		}
		t.Logf("round %d: %d messages, round trip %d acknowledged, %d lines skipped, %d messages dropped",
			round, len(l.Messages), acked, l.Skipped, l.Dropped)
		if round%2 == 1 {
			// The kernel finishes a write a SIGKILL interrupts; a power
			// cut need not. Tear the last line as one would and check
			// that only it is lost; the next child resumes after it.
			acked = tearLastLine(t, rng, st, sess.ID())
		}
	}
}

// tearLastLine cuts the transcript inside its last line and checks the
// load equals that of the file without the line. It returns the round
// trips still complete.
func tearLastLine(t *testing.T, rng *rand.Rand, st *Store, id string) int {
	t.Helper()
	path := st.transcriptPath(id)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	start := bytes.LastIndexByte(b[:len(b)-1], '\n') + 1
	cut := start + 1 + rng.IntN(len(b)-start-2)
	if err := os.WriteFile(path, b[:start], 0o600); err != nil {
		t.Fatal(err)
	}
	want, err := st.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b[:cut], 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := st.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	if ids(got.Messages) != ids(want.Messages) || got.Skipped != want.Skipped+1 {
		t.Fatalf("torn last line: %d messages, %d skipped; want %d, %d", len(got.Messages), got.Skipped, len(want.Messages), want.Skipped+1)
	}
	return len(got.Messages)/3 - 1
}

// killChildAtRandom starts an appending child, lets it write for a random
// while after its first acknowledgement, SIGKILLs it, and returns the last
// round trip it acknowledged.
func killChildAtRandom(t *testing.T, rng *rand.Rand, home, project, id string) (acked int) {
	t.Helper()
	child := startChild(t, "append", home, project, id)
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	acks := make(chan int)
	go func() {
		defer close(acks)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			n, _ := strconv.Atoi(sc.Text())
			acks <- n
		}
	}()
	acked = -1
	defer func() {
		child.Process.Kill()
		for n := range acks { // what the child flushed before it died
			acked = n
		}
		child.Wait()
	}()

	select {
	case n, ok := <-acks:
		if !ok {
			t.Fatal("child exited before writing")
		}
		acked = n
	case <-time.After(10 * time.Second):
		t.Fatal("child wrote nothing")
	}
	kill := time.After(time.Duration(rng.IntN(10_000)) * time.Microsecond)
	for {
		select {
		case n, ok := <-acks:
			if !ok {
				t.Fatal("child exited before it was killed")
			}
			acked = n
		case <-kill:
			return acked
		}
	}
}
