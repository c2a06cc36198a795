package app

import "github.com/coda-cli/coda/internal/tools"

func builtinTools() []tools.Tool {
	ts := append(tools.FileTools(), tools.ShellTools()...)
	return append(ts, tools.NewWebFetch(tools.WebFetchOptions{}), tools.NewTodoWrite())
}
