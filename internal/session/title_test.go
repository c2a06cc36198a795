package session

import (
	"testing"

	"github.com/coda-cli/coda/internal/llm"
)

func TestTitleLeavesOutReminders(t *testing.T) {
	st := NewStore(t.TempDir(), t.TempDir())
	s, err := st.Create()
	if err != nil {
		t.Fatal(err)
	}
	m := llm.Message{ID: "m1", Role: llm.RoleUser, Blocks: []llm.Block{
		llm.Text{Text: "fix the flaky test"},
		llm.Text{Text: "<system-reminder>\n# /p/AGENTS.md\nUse tabs.\n</system-reminder>"},
	}}
	if err := s.AppendMessage(m); err != nil {
		t.Fatal(err)
	}
	if p := s.Prompts(); len(p) != 1 || p[0].Text != "fix the flaky test" {
		t.Fatalf("prompts = %+v", p)
	}
	s.Close()
	infos, err := st.List()
	if err != nil || len(infos) != 1 || infos[0].Title != "fix the flaky test" {
		t.Fatalf("list = %+v, %v", infos, err)
	}
}
