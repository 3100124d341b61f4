package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// commandNames are the subcommands, for help and completion.
func commandNames() []string {
	return []string{"run", "validate", "live", "compare", "plan", "merge", "fit", "size", "report", "scenarios", "bench", "version", "completion", "help"}
}

// cmdVersion prints the module version, the commit when known, and the Go
// version.
func cmdVersion(stdout io.Writer) int {
	version, commit, goVersion := "(devel)", "", "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
		if v := bi.Main.Version; v != "" {
			version = v
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				commit = " " + s.Value
			}
		}
	}
	fmt.Fprintf(stdout, "limitsim %s%s (%s)\n", version, commit, goVersion)
	return exitOK
}

// cmdCompletion prints a shell completion script for bash, zsh or fish:
// subcommands, each command's flags, and bundled scenario names and files
// as arguments.
func cmdCompletion(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: limitsim completion bash|zsh|fish")
		return exitUsage
	}
	words := strings.Join(commandNames(), " ")
	flags := map[string][]string{}
	for _, c := range commandNames() {
		if c != "help" && c != "version" && c != "completion" {
			flags[c] = flagNames(c, new(session))
		}
	}
	cases := func(format string) string { // one case per command with flags
		var b strings.Builder
		for _, c := range commandNames() {
			if len(flags[c]) > 0 {
				fmt.Fprintf(&b, format, c, strings.Join(flags[c], " "))
			}
		}
		return b.String()
	}
	switch args[0] {
	case "bash":
		fmt.Fprintf(stdout, `# limitsim bash completion: source <(limitsim completion bash)
_limitsim() {
  local cur=${COMP_WORDS[COMP_CWORD]} flags=""
  case "${COMP_WORDS[1]}" in
%s  esac
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "%s" -- "$cur"))
  elif [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  elif [ "${COMP_WORDS[1]}" = scenarios ] || [ "$COMP_CWORD" -eq 2 ]; then
    COMPREPLY=($(compgen -W "show $(limitsim scenarios 2>/dev/null | cut -d' ' -f1)" -- "$cur") $(compgen -f -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -o filenames -F _limitsim limitsim
`, cases("    %s) flags=\"%s\" ;;\n"), words)
	case "zsh":
		fmt.Fprintf(stdout, `#compdef limitsim
# limitsim zsh completion: limitsim completion zsh > "${fpath[1]}/_limitsim"
_limitsim() {
  local -a flags
  case "${words[2]}" in
%s  esac
  if (( CURRENT == 2 )); then
    compadd %s
  elif [[ "$PREFIX" == -* ]]; then
    compadd -- $flags
  else
    compadd -- $(limitsim scenarios 2>/dev/null | cut -d' ' -f1)
    _files
  fi
}
_limitsim "$@"
`, cases("    %s) flags=(%s) ;;\n"), words)
	case "fish":
		fmt.Fprintf(stdout, "# limitsim fish completion: limitsim completion fish | source\ncomplete -c limitsim -f -n __fish_use_subcommand -a '%s'\n", words)
		for _, c := range commandNames() {
			for _, f := range flags[c] {
				opt := "-l " + strings.TrimPrefix(f, "--")
				if !strings.HasPrefix(f, "--") {
					opt = "-o " + strings.TrimPrefix(f, "-")
				}
				fmt.Fprintf(stdout, "complete -c limitsim -n '__fish_seen_subcommand_from %s' %s\n", c, opt)
			}
		}
		fmt.Fprintln(stdout, "complete -c limitsim -n '__fish_seen_subcommand_from run validate compare plan size' -a '(limitsim scenarios 2>/dev/null | cut -d\" \" -f1)'")
	default:
		fmt.Fprintf(stderr, "limitsim completion: unknown shell %q (bash, zsh or fish)\n", args[0])
		return exitUsage
	}
	return exitOK
}
