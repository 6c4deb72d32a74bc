package manifest

// ExitError is the error by which an offline command (`almanac validate`, `almanac migrate`)
// sets the process's exit status: main.go exits with ExitCode. Each command documents its
// own codes. It lives here, below both commands, because `almanac validate` imports
// `almanac migrate` (to name the command that converts an object of a replaced system), so
// neither can import the other's.
type ExitError struct {
	Code int
	Err  error // nil when the command's output already said everything
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return ""
	}
	return e.Err.Error()
}

// ExitCode is the process's exit status.
func (e *ExitError) ExitCode() int { return e.Code }

func (e *ExitError) Unwrap() error { return e.Err }
