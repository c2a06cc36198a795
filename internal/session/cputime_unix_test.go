//go:build unix

package session

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time this process has used (all threads, user and
// system). Benchmarks report it beside wall time: on a shared machine it
// is the steadier number.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
