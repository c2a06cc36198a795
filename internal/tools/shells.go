package tools

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Timings of stopping a command. A process group gets SIGTERM first and
// SIGKILL once the grace is over; after that, output still held open by a
// process that left the group is abandoned after outputGrace.
const (
	shellKillGrace   = 2 * time.Second
	shellOutputGrace = 500 * time.Millisecond
)

// shellOutputKeep bounds the output kept for each background shell.
const shellOutputKeep = 1 << 20

// shellCommand describes one bash command to run.
type shellCommand struct {
	Command string
	Dir     string
	// Wrap rewrites the argv before it starts (the OS sandbox); nil runs it
	// as is.
	Wrap func(argv []string) []string
	// KillGrace is the time between SIGTERM and SIGKILL (default
	// shellKillGrace).
	KillGrace time.Duration
}

// shellProc is one `bash -c` process running as the leader of its own
// process group, with stdout and stderr merged into one pipe.
type shellProc struct {
	cmd     *exec.Cmd
	pgid    int
	grace   time.Duration
	out     *os.File // read end of the merged stdout+stderr pipe
	dirFile *os.File // the shell writes its final directory here
	started time.Time

	exited   chan struct{} // closed once the leader has been reaped
	drained  chan struct{} // closed once the output pipe reached EOF or was abandoned
	finished chan struct{} // closed when finish has stopped everything
	finish1  sync.Once
}

// shellExit is how a command ended.
type shellExit struct {
	Code     int            // the exit code; 128+n for a signal, like a shell
	Signal   syscall.Signal // 0 unless the leader died of a signal
	Dir      string         // the shell's final directory, "" if unknown
	Duration time.Duration
}

// dirReport runs at the shell's exit, even after `exit n`, and does not
// change the exit code. Fd 3 is the file startShell passes in. It shares
// the command's first line so bash's line numbers in errors stay right.
const dirReport = "trap 'pwd -P >&3 2>/dev/null' EXIT; "

// startShell starts c in its own process group, copying its merged output
// to out until EOF. The caller must call finish.
func startShell(c shellCommand, out io.Writer) (*shellProc, error) {
	dirFile, err := os.CreateTemp("", "coda-cwd-*")
	if err != nil {
		return nil, fmt.Errorf("create directory report file: %w", err)
	}
	// Only the open descriptors are needed; nothing is left on disk.
	os.Remove(dirFile.Name())
	r, w, err := os.Pipe()
	if err != nil {
		dirFile.Close()
		return nil, fmt.Errorf("create output pipe: %w", err)
	}
	argv := []string{"bash", "-c", dirReport + c.Command}
	if c.Wrap != nil {
		argv = c.Wrap(argv)
	}
	if len(argv) == 0 {
		r.Close()
		w.Close()
		dirFile.Close()
		return nil, errors.New("the shell wrapper returned an empty command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = c.Dir
	cmd.Env = shellEnviron()
	cmd.Stdout = w // the same *os.File for both: one pipe, order kept
	cmd.Stderr = w
	cmd.ExtraFiles = []*os.File{dirFile}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		dirFile.Close()
		return nil, fmt.Errorf("start bash in %s: %w", c.Dir, err)
	}
	w.Close()
	p := &shellProc{
		cmd:      cmd,
		pgid:     cmd.Process.Pid,
		grace:    cmp.Or(c.KillGrace, shellKillGrace),
		out:      r,
		dirFile:  dirFile,
		started:  time.Now(),
		exited:   make(chan struct{}),
		drained:  make(chan struct{}),
		finished: make(chan struct{}),
	}
	go func() {
		cmd.Wait()
		close(p.exited)
	}()
	go func() {
		io.Copy(out, r)
		close(p.drained)
	}()
	return p, nil
}

// shellEnviron is the environment of every command: the user's, plus
// markers that keep tools from opening editors and pagers nobody can use.
func shellEnviron() []string {
	env := os.Environ()
	// exec.Cmd keeps the last value of a duplicated key.
	return append(env, "CODA=1", "GIT_EDITOR=true", "PAGER=cat", "GIT_PAGER=cat")
}

// Exited is closed when the shell itself has ended.
func (p *shellProc) Exited() <-chan struct{} { return p.exited }

// finish stops whatever is left of the process group (everything, when the
// shell is still running), waits for the shell and its output, and reports
// how the shell ended. Safe to call more than once.
func (p *shellProc) finish() shellExit {
	p.finish1.Do(func() {
		p.stopGroup()
		<-p.exited
		select {
		case <-p.drained:
		case <-time.After(shellOutputGrace):
			// A process outside the group (setsid, a daemon) holds the
			// pipe; stop reading rather than wait for it forever.
			p.out.Close()
			<-p.drained
		}
		p.out.Close()
		close(p.finished)
	})
	<-p.finished
	return p.exit()
}

// stopGroup sends SIGTERM to the group, waits for the shell to end and
// its output to close or for the grace to pass, then sends SIGKILL to
// whatever remains. A group that is already empty is left alone.
func (p *shellProc) stopGroup() {
	if done(p.exited) && done(p.drained) && !groupExists(p.pgid) {
		return
	}
	tree := descendants(p.pgid)
	syscall.Kill(-p.pgid, syscall.SIGTERM)
	killAll(tree, syscall.SIGTERM)
	grace := time.NewTimer(p.grace)
	defer grace.Stop()
	exited, drained := p.exited, p.drained
	for exited != nil || drained != nil {
		select {
		case <-exited:
			exited = nil
		case <-drained:
			drained = nil
		case <-grace.C:
			exited, drained = nil, nil
		}
	}
	// Also reaches children that redirected their output elsewhere or
	// ignore SIGTERM, and those in other sessions (the sandbox's).
	killAll(append(tree, descendants(p.pgid)...), syscall.SIGKILL)
	syscall.Kill(-p.pgid, syscall.SIGKILL)
}

func groupExists(pgid int) bool {
	return syscall.Kill(-pgid, 0) == nil
}

func done(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// exit reads the outcome once the process has been reaped.
func (p *shellProc) exit() shellExit {
	e := shellExit{Code: -1, Duration: time.Since(p.started)}
	if st := p.cmd.ProcessState; st != nil {
		e.Code = st.ExitCode()
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			e.Signal = ws.Signal()
			e.Code = 128 + int(e.Signal)
		}
	}
	buf := make([]byte, 8192)
	n, _ := p.dirFile.ReadAt(buf, 0)
	p.dirFile.Close()
	lines := strings.Split(strings.TrimSpace(string(buf[:n])), "\n")
	e.Dir = strings.TrimSpace(lines[len(lines)-1])
	return e
}

// ShellState is the life stage of a background shell.
type ShellState string

const (
	ShellRunning ShellState = "running"
	ShellExited  ShellState = "exited"
	ShellKilled  ShellState = "killed"
)

// ShellStatus describes one background shell.
type ShellStatus struct {
	ID       string
	Command  string
	State    ShellState
	ExitCode int // valid when State is ShellExited
	Started  time.Time
}

// String is the status as the model reads it.
func (s ShellStatus) String() string {
	switch s.State {
	case ShellExited:
		return fmt.Sprintf("exited with code %d", s.ExitCode)
	default:
		return string(s.State)
	}
}

// ShellOutput is what a background shell printed since the last read.
type ShellOutput struct {
	Text    string
	Dropped int64 // bytes lost because the reader fell more than 1 MB behind
	Status  ShellStatus
}

// Shells tracks background Bash commands started with run_in_background.
type Shells struct {
	mu     sync.Mutex
	next   int
	shells map[string]*backgroundShell
	closed bool
	wg     sync.WaitGroup
}

type backgroundShell struct {
	id, command string
	started     time.Time
	proc        *shellProc
	out         *outputRing
	kill        chan struct{} // closed to ask for the group to be killed
	kill1       sync.Once
	done        chan struct{} // closed when the shell is over

	mu       sync.Mutex // guards the fields below
	state    ShellState
	exitCode int
}

// NewShells returns an empty set.
func NewShells() *Shells { return &Shells{shells: make(map[string]*backgroundShell)} }

// start runs c in the background and returns its id ("bash_1", ...).
// onExit, if set, runs when the command ends by itself (not when killed).
func (s *Shells) start(c shellCommand, onExit func(ShellStatus)) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", errors.New("background shells are shut down")
	}
	if s.shells == nil {
		s.shells = make(map[string]*backgroundShell)
	}
	ring := &outputRing{}
	proc, err := startShell(c, ring)
	if err != nil {
		return "", err
	}
	s.next++
	sh := &backgroundShell{
		id:      "bash_" + strconv.Itoa(s.next),
		command: c.Command,
		started: proc.started,
		proc:    proc,
		out:     ring,
		kill:    make(chan struct{}),
		done:    make(chan struct{}),
		state:   ShellRunning,
	}
	s.shells[sh.id] = sh
	s.wg.Add(1)
	go s.supervise(sh, onExit)
	return sh.id, nil
}

// supervise owns a background shell's processes until they are gone.
func (s *Shells) supervise(sh *backgroundShell, onExit func(ShellStatus)) {
	defer s.wg.Done()
	killed := false
	select {
	case <-sh.proc.Exited():
	case <-sh.kill:
		killed = true
	}
	e := sh.proc.finish()
	sh.mu.Lock()
	if killed {
		sh.state = ShellKilled
	} else {
		sh.state = ShellExited
	}
	sh.exitCode = e.Code
	sh.mu.Unlock()
	close(sh.done)
	if !killed && onExit != nil {
		onExit(sh.status())
	}
}

func (sh *backgroundShell) status() ShellStatus {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return ShellStatus{ID: sh.id, Command: sh.command, State: sh.state, ExitCode: sh.exitCode, Started: sh.started}
}

func (s *Shells) get(id string) (*backgroundShell, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sh, ok := s.shells[id]; ok {
		return sh, nil
	}
	if len(s.shells) == 0 {
		return nil, fmt.Errorf("no background shell %q: none has been started", id)
	}
	return nil, fmt.Errorf("no background shell %q; known shells: %s", id, strings.Join(s.idsLocked(), ", "))
}

// idsLocked lists the ids in start order.
func (s *Shells) idsLocked() []string {
	ids := make([]string, 0, len(s.shells))
	for id := range s.shells {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return shellNumber(ids[i]) < shellNumber(ids[j]) })
	return ids
}

func shellNumber(id string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(id, "bash_"))
	return n
}

// Output returns what shell id printed since the previous call.
func (s *Shells) Output(id string) (ShellOutput, error) {
	sh, err := s.get(id)
	if err != nil {
		return ShellOutput{}, err
	}
	// Read the status first: output read after the shell is seen as over
	// is complete.
	st := sh.status()
	text, dropped := sh.out.readNew()
	return ShellOutput{Text: text, Dropped: dropped, Status: st}, nil
}

// Status reports the state of shell id.
func (s *Shells) Status(id string) (ShellStatus, error) {
	sh, err := s.get(id)
	if err != nil {
		return ShellStatus{}, err
	}
	return sh.status(), nil
}

// Kill stops shell id's whole process group and waits until it is gone.
// Killing a shell that already ended changes nothing.
func (s *Shells) Kill(id string) (ShellStatus, error) {
	sh, err := s.get(id)
	if err != nil {
		return ShellStatus{}, err
	}
	sh.kill1.Do(func() { close(sh.kill) })
	<-sh.done
	return sh.status(), nil
}

// List describes every background shell, in start order.
func (s *Shells) List() []ShellStatus {
	s.mu.Lock()
	ids := s.idsLocked()
	shells := make([]*backgroundShell, len(ids))
	for i, id := range ids {
		shells[i] = s.shells[id]
	}
	s.mu.Unlock()
	out := make([]ShellStatus, len(shells))
	for i, sh := range shells {
		out[i] = sh.status()
	}
	return out
}

// Close kills every running background shell and waits for it.
func (s *Shells) Close() {
	s.mu.Lock()
	s.closed = true
	for _, sh := range s.shells {
		sh.kill1.Do(func() { close(sh.kill) })
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// outputRing keeps the last shellOutputKeep bytes written to it and
// remembers how far a reader has got.
type outputRing struct {
	mu      sync.Mutex
	buf     []byte
	written int64 // total bytes ever written
	read    int64 // offset of the first byte not yet read
}

func (o *outputRing) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf = append(o.buf, p...)
	o.written += int64(len(p))
	// Compact only when twice over, so appends stay amortised O(1).
	if len(o.buf) > 2*shellOutputKeep {
		o.buf = append(o.buf[:0:0], o.buf[len(o.buf)-shellOutputKeep:]...)
	}
	return len(p), nil
}

// readNew returns the bytes written since the last call and how many of
// them were dropped before they could be read.
func (o *outputRing) readNew() (string, int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	first := o.written - int64(len(o.buf)) // offset of the oldest byte kept
	var dropped int64
	if o.read < first {
		dropped = first - o.read
		o.read = first
	}
	text := string(o.buf[int64(len(o.buf))-(o.written-o.read):])
	o.read = o.written
	return text, dropped
}
