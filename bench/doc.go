// Package bench holds coda's performance benchmarks: start-up, the loop's
// own overhead between a model answer and the next request, and a whole
// headless run against the wire fake. `bench/run` runs them and, when
// Claude Code is installed, measures it on the same scenarios for ratios.
package bench
