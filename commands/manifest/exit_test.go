package manifest

import (
	"errors"
	"fmt"
	"testing"
)

// TestExitError: main.go finds the exit status through wrapping (errors.As with its exitCoder
// interface); an ExitError without Err prints nothing, since the command's output said it all.
func TestExitError(t *testing.T) {
	cause := errors.New("no input")
	for _, tt := range []struct {
		err     error
		code    int
		message string
		unwraps bool
	}{
		{err: &ExitError{Code: 2, Err: cause}, code: 2, message: "no input", unwraps: true},
		{err: fmt.Errorf("validate: %w", &ExitError{Code: 1}), code: 1, message: "validate: "},
	} {
		var coded interface{ ExitCode() int }
		if !errors.As(tt.err, &coded) || coded.ExitCode() != tt.code {
			t.Errorf("%v: exit code %v, want %d", tt.err, coded, tt.code)
		}
		if got := tt.err.Error(); got != tt.message {
			t.Errorf("message %q, want %q", got, tt.message)
		}
		if got := errors.Is(tt.err, cause); got != tt.unwraps {
			t.Errorf("%v: errors.Is(cause) = %v, want %v", tt.err, got, tt.unwraps)
		}
	}
}
