package permission

import "fmt"

// Mode is the permission mode: what happens to a call no rule decides.
type Mode string

const (
	// ModeDefault runs read-only tools and asks for edits and commands.
	ModeDefault Mode = "default"
	// ModeAcceptEdits also runs edits inside the working directories and
	// mkdir/touch/mv/cp there; other commands ask.
	ModeAcceptEdits Mode = "acceptEdits"
	// ModePlan allows read-only work only, plus writing the session's plan
	// file.
	ModePlan Mode = "plan"
	// ModeBypass runs everything except hard denies, deny rules, protected
	// paths and commands that cannot be read.
	ModeBypass Mode = "bypassPermissions"
	// ModeDontAsk denies whatever would ask: for CI.
	ModeDontAsk Mode = "dontAsk"
)

// ParseMode returns the mode named s ("manual" is an alias of "default").
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeDefault, ModeAcceptEdits, ModePlan, ModeBypass, ModeDontAsk:
		return m, nil
	case "manual", "":
		return ModeDefault, nil
	}
	return ModeDefault, fmt.Errorf("unknown permission mode %q (want default, acceptEdits, plan, bypassPermissions or dontAsk)", s)
}

// Behavior is what a decision lets happen.
type Behavior int

const (
	// Allow runs the call.
	Allow Behavior = iota + 1
	// Ask runs the call only if the user approves it.
	Ask
	// Deny refuses the call.
	Deny
)

func (b Behavior) String() string {
	switch b {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	}
	return fmt.Sprintf("Behavior(%d)", int(b))
}

// Decision is the engine's answer for one tool call.
type Decision struct {
	Behavior Behavior
	// Reason says why, in words for the user (and the model, on a deny).
	Reason string
	// Rule is the rule that decided, as written, if a rule did.
	Rule string
	// Suggestions are the rules that "always allow" would save for an Ask,
	// at most five: "Bash(npm run test *)", "Edit(/src/**)".
	Suggestions []string
	// Hard marks a deny nothing overrides: catastrophic commands.
	Hard bool
}
