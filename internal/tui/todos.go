package tui

import (
	"fmt"
	"strings"

	"github.com/coda-cli/coda/internal/tools"
)

// maxTodoRows bounds the todo panel; longer lists show a window around
// the active item.
const maxTodoRows = 8

// todoLines draws a todo list, one item a line.
func todoLines(th *theme, todos []tools.Todo, width int) string {
	var lines []string
	for _, t := range todos {
		lines = append(lines, todoLine(th, t, width))
	}
	return strings.Join(lines, "\n")
}

func todoLine(th *theme, t tools.Todo, width int) string {
	switch t.Status {
	case "completed":
		return th.dim.Strikethrough(true).Render(truncate("☒ "+t.Content, width))
	case "in_progress":
		return th.bold.Render(truncate("◼ "+t.Content, width))
	}
	return truncate("☐ "+t.Content, width)
}

// activeTodos reports whether the list still has work in it.
func activeTodos(todos []tools.Todo) bool {
	for _, t := range todos {
		if t.Status != "completed" {
			return true
		}
	}
	return false
}

// currentTodo is the item in progress, if any.
func currentTodo(todos []tools.Todo) (tools.Todo, bool) {
	for _, t := range todos {
		if t.Status == "in_progress" {
			return t, true
		}
	}
	return tools.Todo{}, false
}

// todoPanel draws the list above the input, at most maxTodoRows rows.
func todoPanel(th *theme, todos []tools.Todo, width int) string {
	if !activeTodos(todos) {
		return ""
	}
	start, end := 0, len(todos)
	if len(todos) > maxTodoRows {
		focus := 0
		for i, t := range todos {
			if t.Status != "completed" {
				focus = i
				break
			}
		}
		start = max(0, min(focus-2, len(todos)-maxTodoRows))
		end = start + maxTodoRows
	}
	var lines []string
	if start > 0 {
		lines = append(lines, th.dim.Render(fmt.Sprintf("… %d done", start)))
	}
	for _, t := range todos[start:end] {
		lines = append(lines, todoLine(th, t, width-5))
	}
	if end < len(todos) {
		lines = append(lines, th.dim.Render(fmt.Sprintf("… %d more", len(todos)-end)))
	}
	return indent(strings.Join(lines, "\n"), "  ⎿  ", "     ")
}
