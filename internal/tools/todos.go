package tools

import "sync"

// Todo is one item of the model's task list.
type Todo struct {
	Content    string `json:"content"`
	Status     string `json:"status" jsonschema:"enum=pending,enum=in_progress,enum=completed"`
	ActiveForm string `json:"activeForm"`
}

// Todos is the session's todo list, replaced whole by TodoWrite.
type Todos struct {
	mu    sync.Mutex
	items []Todo
}

// Set replaces the list.
func (t *Todos) Set(items []Todo) {
	t.mu.Lock()
	t.items = append([]Todo(nil), items...)
	t.mu.Unlock()
}

// List returns a copy of the list.
func (t *Todos) List() []Todo {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Todo(nil), t.items...)
}
