package llmtest

import (
	"testing"

	"go.uber.org/goleak"
)

// Every stream, delay and hijacked connection must end with its test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
