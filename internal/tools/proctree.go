package tools

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// descendants lists every live descendant of pid, found through /proc.
// Sandboxed commands run in their own session (bwrap --new-session), out
// of reach of a process-group kill, so stopping a command also signals
// the processes found here. Without /proc it returns nil.
func descendants(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := parentOf(child); ok {
			children[ppid] = append(children[ppid], child)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// parentOf reads the parent pid from /proc/<pid>/stat. The command name
// may contain spaces and parentheses, so parsing starts after the last ')'.
func parentOf(pid int) (int, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(fields[1])
	return ppid, err == nil
}

// killAll sends sig to each pid, ignoring those already gone.
func killAll(pids []int, sig syscall.Signal) {
	for _, p := range pids {
		_ = syscall.Kill(p, sig)
	}
}
