package tools

// Shells tracks background Bash commands started with run_in_background.
// (The full implementation comes with the Bash tool.)
type Shells struct{}

// NewShells returns an empty set.
func NewShells() *Shells { return &Shells{} }

// Close kills every running background shell and waits for it.
func (s *Shells) Close() {}
