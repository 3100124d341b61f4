package main

import (
	"errors"
	"strings"
	"testing"
)

// exitCodeOf prints an exitError's message once, by one rule: after
// "limitsim: " unless it names the command, a verbatimError as it is, a
// messageList one message a line in order, a nil err not at all.
func TestExitCodeOfPrintsEachMessageOnce(t *testing.T) {
	for _, c := range []struct {
		err  error
		code int
		want string
	}{
		{nil, exitOK, ""},
		{&exitError{code: exitUsage}, exitUsage, ""},
		{invalidInput(errors.New("stat x.toml: no such file")), exitInvalid, "limitsim: stat x.toml: no such file\n"},
		{badUsage(errors.New("limitsim plan: --workers must be at least 1")), exitUsage, "limitsim plan: --workers must be at least 1\n"},
		{internalError(verbatim(errors.New("s.toml: bad"))), exitInternal, "s.toml: bad\n"},
		{invalidInput(messageList{verbatim(errors.New("s.toml:3: rate: bad")), errors.New("1 problem; nothing was run")}), exitInvalid,
			"s.toml:3: rate: bad\nlimitsim: 1 problem; nothing was run\n"},
		{(&session{}).stopped(errors.New("x: interrupted")), exitSignal, "limitsim: x: interrupted\n"},
	} {
		var b strings.Builder
		if code := exitCodeOf(c.err, &b); code != c.code || b.String() != c.want {
			t.Errorf("%v: exit %d, printed %q; want exit %d, %q", c.err, code, b.String(), c.code, c.want)
		}
	}
}
