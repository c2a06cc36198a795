// Command coda is a terminal coding agent.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/coda-cli/coda/internal/app"
)

func main() {
	os.Exit(execute(os.Args[1:]))
}

func execute(args []string) int {
	var o app.Options
	code := 0
	root := &cobra.Command{
		Use:   "coda [prompt]",
		Short: "A terminal coding agent",
		Long: `coda is a coding agent for your terminal: it streams a model's answer, reads, edits,
searches and runs things in your repository under permissions you control.

  coda                       start an interactive session
  coda -p "fix the test"     run one prompt headless and print the answer
  echo "explain" | coda -p   the prompt may also come on standard input`,
		Version:       app.Version,
		Args:          cobra.MaximumNArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Prompt = args[0]
			}
			o.Stdin = cmd.InOrStdin()
			if f, ok := o.Stdin.(*os.File); ok && isTerminal(f) {
				o.Stdin = nil
			}
			code = app.Main(context.Background(), o)
			return nil
		},
	}
	root.SetVersionTemplate("coda {{.Version}}\n")
	f := root.Flags()
	f.BoolVarP(&o.Print, "print", "p", false, "run the prompt headless, print the result and exit")
	f.StringVar(&o.OutputFormat, "output-format", "text", "headless output: text, json or stream-json")
	f.BoolVar(&o.Verbose, "verbose", false, "more output (required with --output-format stream-json)")
	f.IntVar(&o.MaxTurns, "max-turns", 100, "most model requests in one headless run")
	f.Float64Var(&o.MaxBudgetUSD, "max-budget-usd", 0, "stop once the run has cost this many US dollars (0: no limit)")
	f.StringVar(&o.Model, "model", "", "model as provider/model (openai/gpt-4.1) or a name the catalog knows")
	f.StringVar(&o.FallbackModel, "fallback-model", "", "model to switch to after repeated overload errors")
	f.StringVar(&o.PermissionMode, "permission-mode", "", "default, acceptEdits, plan, bypassPermissions or dontAsk")
	f.StringSliceVar(&o.AllowedTools, "allowedTools", nil, `tools or rules allowed without asking, e.g. "Bash(git diff *),Read"`)
	f.StringSliceVar(&o.DisallowedTools, "disallowedTools", nil, "tools or rules always denied")
	f.StringVar(&o.SystemPrompt, "system-prompt", "", "replace the built-in system prompt")
	f.StringVar(&o.AppendSystemPrompt, "append-system-prompt", "", "append text to the system prompt")
	root.PersistentFlags().StringVar(&o.Cwd, "cwd", "", "work in this directory instead of the current one")
	f.StringSliceVar(&o.AddDirs, "add-dir", nil, "additional directories tools may work in")
	f.StringVar(&o.Settings, "settings", "", "extra settings: a JSON file or inline JSON")
	f.BoolVarP(&o.Continue, "continue", "c", false, "continue the newest session of this project")
	f.StringVarP(&o.Resume, "resume", "r", "", "resume a session by id (without an id: choose one)")
	f.Lookup("resume").NoOptDefVal = app.ResumePicker
	f.BoolVar(&o.ForkSession, "fork-session", false, "with --continue or --resume: continue in a new session, leaving the old one untouched")
	f.StringVar(&o.SessionID, "session-id", "", "id for the new session")
	var dangerous bool
	f.BoolVar(&dangerous, "dangerously-skip-permissions", false, "same as --permission-mode bypassPermissions")
	// Claude Code accepts both spellings.
	f.StringSliceVar(&o.AllowedTools, "allowed-tools", nil, "same as --allowedTools")
	f.StringSliceVar(&o.DisallowedTools, "disallowed-tools", nil, "same as --disallowedTools")
	_ = f.MarkHidden("allowed-tools")
	_ = f.MarkHidden("disallowed-tools")
	root.PreRun = func(*cobra.Command, []string) {
		if dangerous && o.PermissionMode == "" {
			o.PermissionMode = "bypassPermissions"
		}
	}
	root.AddCommand(sessionsCommand(&o))
	root.SetArgs(joinResumeID(args))
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "coda:", err)
		return app.ExitConfig
	}
	return code
}

func sessionsCommand(o *app.Options) *cobra.Command {
	list := &cobra.Command{
		Use:   "sessions",
		Short: "List this project's sessions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return app.ListSessions(*o, cmd.OutOrStdout())
		},
	}
	list.AddCommand(&cobra.Command{
		Use:   "rm <id>",
		Short: "Remove a session",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return app.RemoveSession(*o, args[0])
		},
	})
	return list
}

// joinResumeID lets `--resume <id>` work as in Claude Code: the flag's
// value is optional (alone it opens a picker), which pflag would only take
// in the `--resume=<id>` spelling.
func joinResumeID(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if (a == "--resume" || a == "-r") && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			out = append(out, "--resume="+args[i+1])
			i++
			continue
		}
		if a == "--" {
			return append(out, args[i:]...)
		}
		out = append(out, a)
	}
	return out
}
