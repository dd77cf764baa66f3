package core

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Both CLIs (host/cmd/asyncagents under wazero, plugin-js/cli under Node) read their command line
// here, so that a flag, a help text or an error means the same in each: one had Go's flag package
// and the other an imitation of it, whose words ("flag provided but not defined: extra" for an
// argument that is no flag) a newcomer found wrong, and neither took `ls --help`.

// CLIArgs is a command line read: the command and its flags; or Help, the text to print (and exit
// 0); or Version.
type CLIArgs struct {
	// Command is ls, serve, dashboard, doctor or workers ("" with Help or Version).
	Command string `json:"command,omitempty"`
	// Project is --project (or --dir): "" for the working directory.
	Project string `json:"project,omitempty"`
	Wasm    string `json:"wasm,omitempty"`
	Port    string `json:"port,omitempty"`
	Print   bool   `json:"print,omitempty"`
	JSON    bool   `json:"json,omitempty"`
	// Help is the usage to print: the whole one, or the command's.
	Help string `json:"help,omitempty"`
	// Version asks for the version line (CLIVersionLine).
	Version bool `json:"version,omitempty"`
}

// CLIUsageError is a command line that cannot be run: the CLI prints it and exits 2.
type CLIUsageError struct{ Text string }

func (e *CLIUsageError) Error() string { return e.Text }

// cliCommand is one command: what it does and the flags it takes besides --project and --wasm.
type cliCommand struct {
	name, does string
	flags      []cliFlag
}

type cliFlag struct {
	name, arg, does string // arg "": a switch
}

var cliCommands = []cliCommand{
	{name: "ls", does: "print the project's tasks as a table"},
	{name: "serve", does: "serve the status API over the stored history, read-only",
		flags: []cliFlag{{"port", "N", "the first port to try (default $" + EnvAPIPort + ", else " + fmt.Sprint(DefaultAPIPort) + ")"}}},
	{name: "dashboard", does: "open the project's running status API page in the browser",
		flags: []cliFlag{{"print", "", "print its one-time URL instead"}}},
	{name: "doctor", does: "say whether the plugin loaded, and what to fix (exit 1 if something is)"},
	{name: "workers", does: "list the running plugin's workers: health, load and version",
		flags: []cliFlag{{"json", "", "print the API's answer"}}},
}

var cliCommonFlags = []cliFlag{
	{"project", "DIR", "the project OpenCode ran in (default: the working directory; --dir too)"},
	{"wasm", "FILE", "the core module (default: $ASYNCAGENTS_WASM, else the one beside this program)"},
}

// ParseCLIArgs reads args (without the program's name); envPort is $ASYNCAGENTS_API_PORT, serve's
// port without --port.
func ParseCLIArgs(args []string, envPort string) (CLIArgs, error) {
	if len(args) == 0 || isHelp(args[0]) || args[0] == "help" {
		switch {
		case len(args) == 2 && args[0] == "help":
			return cliCommandHelp(args[1])
		case len(args) > 2 && args[0] == "help":
			return CLIArgs{}, &CLIUsageError{"asyncagents help: one command at most\n" + CLIUsage}
		}
		return CLIArgs{Help: CLIUsage}, nil
	}
	if args[0] == "--version" || args[0] == "-version" || args[0] == "version" {
		return CLIArgs{Version: true}, nil
	}
	c, err := findCLICommand(args[0])
	if err != nil {
		return CLIArgs{}, err
	}
	a := CLIArgs{Command: c.name}
	fail := func(format string, v ...any) (CLIArgs, error) {
		return CLIArgs{}, &CLIUsageError{fmt.Sprintf("asyncagents %s: %s\n%s", c.name, fmt.Sprintf(format, v...), c.usage())}
	}
	flags := true // until a "--", which ends them as Go's flag package does
	for k := 1; k < len(args); k++ {
		arg := args[k]
		if flags && isHelp(arg) {
			return CLIArgs{Help: c.usage()}, nil
		}
		if flags && arg == "--" {
			flags = false
			continue
		}
		if !flags || !strings.HasPrefix(arg, "-") || arg == "-" {
			return fail("%q is not a flag: %s takes no arguments", arg, c.name)
		}
		name, value, inline := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(arg, "-"), "-"), "=")
		if name == "dir" {
			name = "project"
		}
		f, ok := c.flag(name)
		if !ok {
			return fail("unknown flag %s", "--"+name)
		}
		if f.arg == "" {
			on, err := strconv.ParseBool(value)
			if !inline {
				on, err = true, nil
			}
			if err != nil {
				return fail("--%s takes no value (or true, false), not %q", name, value)
			}
			if name == "print" {
				a.Print = on
			} else {
				a.JSON = on
			}
			continue
		}
		if !inline {
			if k+1 >= len(args) {
				return fail("--%s needs a value (%s)", name, f.arg)
			}
			k++
			value = args[k]
		}
		switch name {
		case "project":
			a.Project = value
		case "wasm":
			a.Wasm = value
		case "port":
			if value != "" && !apiPortOK(value) { // empty: the default, as before
				return fail("--port: %q is not a port number %s", value, cliPortRange)
			}
			a.Port = value
		}
	}
	if c.name == "serve" && a.Port == "" && envPort != "" {
		if !apiPortOK(envPort) {
			return fail("$%s: %q is not a port number %s", EnvAPIPort, envPort, cliPortRange)
		}
		a.Port = envPort
	}
	return a, nil
}

// cliPortRange is the first ports serve takes (storage.go apiPortOK).
var cliPortRange = fmt.Sprintf("(1 to %d: it and the nine after it are tried)", maxFirstAPIPort)

func isHelp(arg string) bool { return arg == "-h" || arg == "--help" || arg == "-help" }

// cliCommandHelp is `asyncagents help <command>`.
func cliCommandHelp(name string) (CLIArgs, error) {
	c, err := findCLICommand(name)
	if err != nil {
		return CLIArgs{}, err
	}
	return CLIArgs{Help: c.usage()}, nil
}

// findCLICommand is the command named name, or the usage error for an unknown one.
func findCLICommand(name string) (cliCommand, error) {
	i := slices.IndexFunc(cliCommands, func(c cliCommand) bool { return c.name == name })
	if i < 0 {
		return cliCommand{}, &CLIUsageError{fmt.Sprintf("asyncagents: unknown command %q\n%s", name, CLIUsage)}
	}
	return cliCommands[i], nil
}

func (c cliCommand) flag(name string) (cliFlag, bool) {
	for _, f := range slices.Concat(cliCommonFlags, c.flags) {
		if f.name == name {
			return f, true
		}
	}
	return cliFlag{}, false
}

// usage is the command's help: its line, and each flag it takes.
func (c cliCommand) usage() string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: asyncagents %s [flags]\n  %s\nflags:\n", c.name, c.does)
	for _, f := range slices.Concat(cliCommonFlags, c.flags) {
		spec := "--" + f.name
		if f.arg != "" {
			spec += " " + f.arg
		}
		fmt.Fprintf(&b, "  %-14s %s\n", spec, f.does)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// CLIVersionLine is what `asyncagents --version` prints.
func CLIVersionLine() string { return "asyncagents " + Version }
