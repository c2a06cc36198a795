package llmtest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
)

// checkAntThinking enforces the extended-thinking request rules.
func checkAntThinking(req antRequest) *apiError {
	if len(req.Thinking) == 0 || string(req.Thinking) == "null" {
		return nil
	}
	var th struct {
		Type         string `json:"type"`
		BudgetTokens *int   `json:"budget_tokens"`
	}
	if err := json.Unmarshal(req.Thinking, &th); err != nil {
		return invalid("thinking: Input should be a valid dictionary")
	}
	switch th.Type {
	case "enabled":
		switch {
		case th.BudgetTokens == nil:
			return invalid("thinking.enabled.budget_tokens: Field required")
		case *th.BudgetTokens < 1024:
			return invalid("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
		case *th.BudgetTokens >= *req.MaxTokens:
			return invalid("`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size")
		}
	case "adaptive":
	default:
		return nil // disabled, or a newer mode this fake does not model
	}
	if len(req.ToolChoice) > 0 {
		var tc struct {
			Type string `json:"type"`
		}
		json.Unmarshal(req.ToolChoice, &tc)
		if tc.Type != "" && tc.Type != "auto" && tc.Type != "none" {
			return invalid("Thinking may not be enabled when tool_choice forces tool use.")
		}
	}
	if req.Temperature != nil && *req.Temperature != 1 {
		return invalid("`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#important-considerations-when-using-extended-thinking")
	}
	return nil
}

// signatureKey signs thinking text. It is fixed, like the real API's key, so
// a signature stays valid across servers (a resumed session in a new test
// step still verifies).
const signatureKey = "llmtest thinking signature v1"

// signThinking is the signature the fake issues for a thinking text.
func signThinking(text string) string {
	mac := hmac.New(sha256.New, []byte(signatureKey))
	mac.Write([]byte(text))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}
