package app

import (
	"strings"
	"testing"
	"time"

	"github.com/coda-cli/coda/internal/llm"
)

func TestStaleReminder(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	if r := staleReminder(now.Add(-2*time.Hour), now); r != "" {
		t.Errorf("fresh session got a reminder: %q", r)
	}
	if r := staleReminder(time.Time{}, now); r != "" {
		t.Errorf("new session got a reminder: %q", r)
	}
	r := staleReminder(now.Add(-50*time.Hour), now)
	if !strings.Contains(r, "50 hours ago") || !strings.Contains(r, "Read them again") {
		t.Errorf("stale session reminder: %q", r)
	}
}

func TestIsPrompt(t *testing.T) {
	typed := llm.UserText("fix it")
	results := llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{llm.ToolResult{ToolUseID: "t"}}}
	reminder := llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{llm.Text{Text: "x"}}, Meta: llm.Meta{Reminder: true}}
	if !isPrompt(typed) || isPrompt(results) || isPrompt(reminder) {
		t.Fatal("isPrompt misclassifies messages")
	}
}

func TestSplitTools(t *testing.T) {
	got := splitTools([]string{"Read,Edit", "Bash(git diff *),Bash(npm run test:*) WebFetch"})
	want := []string{"Read", "Edit", "Bash(git diff *)", "Bash(npm run test:*)", "WebFetch"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("splitTools = %q", got)
	}
}
