package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// exitError ends a command with an exit code and says why: exitCodeOf
// prints err once (see printError) and exits with code. A nil err prints
// nothing: the command has already said what went wrong (the root
// command's usage, printed when no command is given).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// verbatimError is a message printed as it is, without "limitsim: "
// before it: a scenario's problem ("file:line: key: ..."), or a message
// that starts with the file at fault.
type verbatimError struct{ err error }

// Error is the message, as it is printed.
func (v verbatimError) Error() string { return v.err.Error() }

// Unwrap is the error marked verbatim.
func (v verbatimError) Unwrap() error { return v.err }

// verbatim marks err to be printed as it is.
func verbatim(err error) error { return verbatimError{err} }

// messageList is several messages that end one command together (the
// problems of a scenario, every assertion that failed): printed in order,
// one a line, each by the rule of printError.
type messageList []error

// Error is the messages, one a line.
func (m messageList) Error() string {
	texts := make([]string, len(m))
	for i, err := range m {
		texts[i] = err.Error()
	}
	return strings.Join(texts, "\n")
}

// Unwrap is the messages, for errors.Is and errors.As.
func (m messageList) Unwrap() []error { return m }

// badUsage is a mistake in how a command was called (exit 1) that err
// says in full, without the usage line of usageError.
func badUsage(err error) error { return &exitError{code: exitUsage, err: err} }

// invalidInput is a scenario, a flag's value, a file or a folder that
// cannot be used (exit 2).
func invalidInput(err error) error { return &exitError{code: exitInvalid, err: err} }

// internalError is a failure that is no fault of the input (exit 70): a
// write to stdout, a run that failed.
func internalError(err error) error { return &exitError{code: exitInternal, err: err} }

// exitCodeOf prints what err says, once, and maps it to the exit code: an
// exitError carries its own; anything else cobra returns (an unknown
// command or flag, a wrong number of arguments) is a usage error.
func exitCodeOf(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		printError(stderr, ee.err)
		return ee.code
	}
	msg := strings.TrimRight(err.Error(), "\n")
	fmt.Fprintln(stderr, prefixed(msg))
	if !strings.Contains(msg, "Did you mean") {
		fmt.Fprintln(stderr, "Run 'limitsim --help' for the commands.")
	}
	return exitUsage
}

// printError prints err on its own line: after "limitsim: " (prefixed),
// unless it is a verbatimError; a messageList prints each of its messages
// so. A nil err prints nothing.
func printError(w io.Writer, err error) {
	switch e := err.(type) {
	case nil:
	case messageList:
		for _, m := range e {
			printError(w, m)
		}
	case verbatimError:
		fmt.Fprintln(w, e.Error())
	default:
		fmt.Fprintln(w, prefixed(err.Error()))
	}
}
