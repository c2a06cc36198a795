package main

import "os"

// isTerminal reports whether f is a character device (a terminal), in
// which case no prompt is waiting on it.
func isTerminal(f *os.File) bool {
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
