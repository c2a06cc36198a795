package session

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coda-cli/coda/internal/llm"
	"go.uber.org/goleak"
)

// The test binary doubles as the child process of the kill and lock
// tests: with childEnv set it runs that role instead of the tests.
const childEnv = "CODA_SESSION_TEST_CHILD"

func TestMain(m *testing.M) {
	if role := os.Getenv(childEnv); role != "" {
		os.Exit(runChild(role))
	}
	goleak.VerifyTestMain(m)
}

func runChild(role string) int {
	store := NewStore(os.Getenv("CODA_TEST_HOME"), os.Getenv("CODA_TEST_PROJECT"))
	id := os.Getenv("CODA_TEST_ID")
	switch role {
	case "hold":
		// Take the session, say so, hold it until stdin closes.
		sess, _, err := store.Open(id)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println("locked")
		bufio.NewReader(os.Stdin).ReadString('\n')
		if err := sess.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	case "append":
		// Append the pattern of killMessage forever, acknowledging each
		// finished tool round trip, until killed.
		sess, loaded, err := store.Open(id)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		out := bufio.NewWriter(os.Stdout)
		for n := len(loaded.Messages); ; n++ {
			if err := sess.AppendMessage(killMessage(n)); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			if n%3 == 2 {
				fmt.Fprintln(out, n/3)
				out.Flush()
			}
			if n%30 == 29 {
				sess.Sync()
			}
		}
	}
	fmt.Fprintln(os.Stderr, "unknown child role", role)
	return 2
}

// killMessage is message n of the kill test's conversation: prompt k,
// an assistant tool_use, its result (of varying size, so some writes are
// large enough to be cut short by a kill).
func killMessage(n int) llm.Message {
	k := strconv.Itoa(n / 3)
	switch n % 3 {
	case 0:
		return llm.Message{ID: "u-" + k, Role: llm.RoleUser, Blocks: []llm.Block{llm.Text{Text: "prompt " + k}}}
	case 1:
		return llm.Message{ID: "a-" + k, Role: llm.RoleAssistant, Blocks: []llm.Block{
			llm.ToolUse{ID: "t-" + k, Name: "Bash", Input: json.RawMessage(`{"command":"echo ` + k + `"}`)},
		}}
	default:
		lines := (n * 7919) % 400
		if n%7 == 2 {
			lines *= 10 // now and then a write of many pages
		}
		out := strings.Repeat("output line "+k+"\n", lines)
		return llm.Message{ID: "r-" + k, Role: llm.RoleUser, Blocks: []llm.Block{
			llm.ToolResult{ToolUseID: "t-" + k, Content: []llm.Block{llm.Text{Text: out}}},
		}}
	}
}

// startChild runs the test binary in role against store's session id.
func startChild(t *testing.T, role, home, project, id string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+role, "CODA_TEST_HOME="+home, "CODA_TEST_PROJECT="+project, "CODA_TEST_ID="+id)
	cmd.Stderr = os.Stderr
	return cmd
}

// testStore is a store with its own home and project folders.
func testStore(t *testing.T) (store *Store, home, project string) {
	t.Helper()
	home, project = t.TempDir(), t.TempDir()
	return NewStore(home, project), home, project
}

func mustCreate(t *testing.T, st *Store) *Session {
	t.Helper()
	sess, err := st.Create()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

func mustAppend(t *testing.T, sess *Session, msgs ...llm.Message) {
	t.Helper()
	for _, m := range msgs {
		if err := sess.AppendMessage(m); err != nil {
			t.Fatal(err)
		}
	}
}

func mustOpen(t *testing.T, st *Store, id string) (*Session, *Loaded) {
	t.Helper()
	sess, loaded, err := st.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess, loaded
}

func prompt(id, text string) llm.Message {
	return llm.Message{ID: id, Role: llm.RoleUser, Blocks: []llm.Block{llm.Text{Text: text}}}
}

func reply(id, text string) llm.Message {
	return llm.Message{ID: id, Role: llm.RoleAssistant, Blocks: []llm.Block{llm.Text{Text: text}}}
}

// ids lists the message ids, the shape most assertions compare.
func ids(msgs []llm.Message) string {
	s := make([]string, len(msgs))
	for i, m := range msgs {
		s[i] = m.ID
	}
	return strings.Join(s, " ")
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// recordLine renders a record as the file holds it.
func recordLine(t *testing.T, rec Record) string {
	t.Helper()
	if rec.Time.IsZero() {
		rec.Time = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

func msgLine(t *testing.T, m llm.Message) string {
	return recordLine(t, Record{Type: TypeMessage, Message: &m})
}
