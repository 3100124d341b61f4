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

// A command given too few arguments says, in its own words, how many it
// takes, with its usage line, and exits as a misused command.
func TestTooFewArgumentsNameTheCommand(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"merge"}, "limitsim merge takes at least 1 argument, got 0"},
		{[]string{"compare"}, "limitsim compare takes at least 1 argument, got 0"},
		{[]string{"replay", "x.log"}, "limitsim replay takes at least 2 arguments, got 1"},
		{[]string{"run"}, "limitsim run takes 1 argument, got 0"},
	} {
		code, _, errOut := cli(c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, "usage: limitsim "+c.args[0]) {
			t.Errorf("%v: exit %d, %q: want exit %d saying %q with the usage line", c.args, code, errOut, exitUsage, c.want)
		}
	}
}
