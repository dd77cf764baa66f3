package core

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseCLIArgs(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  string // $ASYNCAGENTS_API_PORT
		want CLIArgs
		err  string // a usage error holds it (and the command's usage)
	}{
		{"no command", nil, "", CLIArgs{Help: CLIUsage}, ""},
		{"help", []string{"--help"}, "", CLIArgs{Help: CLIUsage}, ""},
		{"version", []string{"--version"}, "", CLIArgs{Version: true}, ""},
		{"a command's help", []string{"serve", "-h"}, "", CLIArgs{Help: cliCommands[1].usage()}, ""},
		{"help after flags", []string{"ls", "--project", "/p", "--help"}, "", CLIArgs{Help: cliCommands[0].usage()}, ""},
		{"help for a command", []string{"help", "dashboard"}, "", CLIArgs{Help: cliCommands[2].usage()}, ""},
		{"flags", []string{"serve", "--project", "/p", "--wasm=/w.wasm", "-port", "5170"}, "", CLIArgs{Command: "serve", Project: "/p", Wasm: "/w.wasm", Port: "5170"}, ""},
		{"--dir is --project", []string{"ls", "--dir=/p"}, "", CLIArgs{Command: "ls", Project: "/p"}, ""},
		{"switches", []string{"dashboard", "--print"}, "", CLIArgs{Command: "dashboard", Print: true}, ""},
		{"a switch set false", []string{"workers", "--json=false"}, "", CLIArgs{Command: "workers"}, ""},
		{"unknown command", []string{"frob"}, "", CLIArgs{}, `asyncagents: unknown command "frob"`},
		{"an argument", []string{"ls", "extra"}, "", CLIArgs{}, `asyncagents ls: "extra" is not a flag: ls takes no arguments`},
		{"another command's flag", []string{"ls", "--port", "1"}, "", CLIArgs{}, "asyncagents ls: unknown flag --port"},
		{"no value", []string{"ls", "--project"}, "", CLIArgs{}, "asyncagents ls: --project needs a value (DIR)"},
		{"a switch with a value", []string{"dashboard", "--print=yes"}, "", CLIArgs{}, `--print takes no value (or true, false), not "yes"`},
		{"a bad port", []string{"serve", "--port", "http"}, "", CLIArgs{}, `asyncagents serve: --port: "http" is not a port number (1 to 65526: it and the nine after it are tried)`},
		{"a port out of range", []string{"serve", "--port=70000"}, "", CLIArgs{}, `"70000" is not a port number`},
		{"help for no command", []string{"help", "frob"}, "", CLIArgs{}, `unknown command "frob"`},
		{"help for two", []string{"help", "ls", "x"}, "", CLIArgs{}, "asyncagents help: one command at most"},
		{"-- ends the flags", []string{"ls", "--"}, "", CLIArgs{Command: "ls"}, ""},
		{"an argument after --", []string{"ls", "--", "--project"}, "", CLIArgs{}, `"--project" is not a flag: ls takes no arguments`},
		{"a switch as Go reads it", []string{"workers", "--json=1", "--print=0"}, "", CLIArgs{}, "unknown flag --print"},
		{"a switch set 1", []string{"dashboard", "--print=1"}, "", CLIArgs{Command: "dashboard", Print: true}, ""},
		{"an empty port is the default", []string{"serve", "--port="}, "", CLIArgs{Command: "serve"}, ""},
		{"a port too high to try nine more", []string{"serve", "--port", "65530"}, "", CLIArgs{}, `"65530" is not a port number (1 to 65526`},
		{"the highest first port", []string{"serve", "--port", "65526"}, "", CLIArgs{Command: "serve", Port: "65526"}, ""},
		{"a signed port", []string{"serve", "--port", "+80"}, "", CLIArgs{}, `"+80" is not a port number`},
		{"serve's port from the environment", []string{"serve"}, "5170", CLIArgs{Command: "serve", Port: "5170"}, ""},
		{"--port over the environment", []string{"serve", "--port", "5171"}, "5170", CLIArgs{Command: "serve", Port: "5171"}, ""},
		{"a bad port in the environment", []string{"serve"}, "abc", CLIArgs{}, `asyncagents serve: $ASYNCAGENTS_API_PORT: "abc" is not a port number (1 to 65526: it and the nine after it are tried)`},
		{"the environment's port is serve's only", []string{"ls"}, "abc", CLIArgs{Command: "ls"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCLIArgs(tc.args, tc.env)
			if tc.err == "" {
				require.NoError(t, err)
				require.Equal(t, tc.want, got)
				return
			}
			require.ErrorContains(t, err, tc.err)
			require.IsType(t, &CLIUsageError{}, err)
			require.Contains(t, err.Error(), "usage: asyncagents", "the usage follows")
		})
	}
}

// Every command's help lists each flag it takes, and the whole usage names every command.
func TestEveryCommandIsInTheUsage(t *testing.T) {
	for _, c := range cliCommands {
		require.Contains(t, CLIUsage, "  "+c.name+" ")
		for _, f := range append(cliCommonFlags, c.flags...) {
			require.Contains(t, c.usage(), "--"+f.name)
		}
	}
}
