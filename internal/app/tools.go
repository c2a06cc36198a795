package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/coda-cli/coda/internal/agent"
	"github.com/coda-cli/coda/internal/config"
	"github.com/coda-cli/coda/internal/llm"
	"github.com/coda-cli/coda/internal/tools"
)

// builtinTools are the tools every session starts with. summarize, when
// set, lets WebFetch answer from a page through a small model.
func builtinTools(summarize func(ctx context.Context, markdown, prompt string) (string, error)) []tools.Tool {
	ts := append(tools.FileTools(), tools.ShellTools()...)
	return append(ts, tools.NewWebFetch(tools.WebFetchOptions{Summarize: summarize}), tools.NewTodoWrite())
}

// smallModelName is the model for side tasks (WebFetch summaries): the
// "smallModel" setting, else ANTHROPIC_SMALL_FAST_MODEL as Claude Code
// reads it. "" means none.
func smallModelName(st config.Settings, getenv func(string) string) string {
	if raw, ok := st.Extra["smallModel"]; ok {
		var name string
		if json.Unmarshal(raw, &name) == nil && name != "" {
			return name
		}
	}
	return getenv("ANTHROPIC_SMALL_FAST_MODEL")
}

// summarizer answers a question about a page with one tool-less request.
func summarizer(m agent.Model) func(ctx context.Context, markdown, prompt string) (string, error) {
	return func(ctx context.Context, markdown, prompt string) (string, error) {
		req := llm.Request{
			Model:     m.Info.ID,
			System:    "You answer a question about a web page using only its content. Quote exact text where precision matters (code, numbers, names). Be concise.",
			MaxTokens: min(4096, m.Info.MaxOutputTokens),
			Messages:  []llm.Message{llm.UserText(fmt.Sprintf("<page>\n%s\n</page>\n\n%s", markdown, prompt))},
		}
		s, err := m.Provider.Stream(ctx, req)
		if err != nil {
			return "", err
		}
		defer s.Close()
		var b strings.Builder
		for {
			ev, err := s.Next()
			if errors.Is(err, io.EOF) {
				return b.String(), nil
			}
			if err != nil {
				return "", err
			}
			if d, ok := ev.(llm.TextDelta); ok {
				b.WriteString(d.Text)
			}
		}
	}
}
