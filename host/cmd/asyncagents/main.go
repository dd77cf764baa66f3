// Command asyncagents is the Go host's CLI: it runs the same core .wasm as the OpenCode plugin,
// under wazero, over the plugin's files, so task history can be read while OpenCode is not
// running.
//
//	asyncagents ls        [--project DIR] [--wasm FILE]             the project's tasks, as a table
//	asyncagents serve     [--project DIR] [--wasm FILE] [--port N]  the status API over them, read-only
//	asyncagents dashboard [--project DIR] [--print]                 open the project's running status API page
//	asyncagents doctor    [--project DIR]                           say whether the plugin loaded, and what to fix
//	asyncagents workers   [--project DIR] [--json]                  the running plugin's workers: health, load, version
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/abi"
	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/host"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	a, err := core.ParseCLIArgs(args, os.Getenv(core.EnvAPIPort))
	switch {
	case err != nil:
		fmt.Fprintln(stderr, err)
		return 2
	case a.Version:
		fmt.Fprintln(stdout, core.CLIVersionLine())
		return 0
	case a.Help != "":
		fmt.Fprintln(stdout, a.Help)
		return 0
	}
	switch a.Command {
	case "serve":
		// SIGINT and SIGTERM stop it gracefully: streams end, answers in flight finish.
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		err = serve(ctx, a, stdout)
	case "ls":
		err = ls(a, stdout)
	case "dashboard":
		err = dashboard(a, stdout, stderr)
	case "workers":
		err = workers(a, stdout, stderr)
	case "doctor":
		err = doctor(a, stdout)
	}
	switch {
	case errors.Is(err, errDoctorTrouble):
		return 1
	case err != nil:
		fmt.Fprintf(stderr, "asyncagents %s: %v\n", a.Command, err)
		return 1
	}
	return 0
}

func ls(a core.CLIArgs, stdout io.Writer) error {
	ctx := context.Background()
	project, c, st, err := openCommand(ctx, a)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	if err := configure(ctx, c, config.Config{}, st); err != nil {
		return err
	}
	// Every process that served the project wrote a log of its own (core/history_files.go): ls
	// reads them all as one. A log's index fits it alone, so it is read when there is one log.
	entries, err := os.ReadDir(st.Dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	env := storageEnv(project, "")
	plan, err := c.Do(ctx, abi.Request{Op: "histories", Env: &env, Files: names})
	if err != nil {
		return err
	}
	var history, index []byte
	for _, name := range plan.Histories.Follow {
		log, err := os.ReadFile(filepath.Join(st.Dir, name))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if len(history) > 0 && history[len(history)-1] != '\n' {
			history = append(history, '\n') // a torn last line does not swallow the next log's first
		}
		history = append(history, log...)
	}
	if logs := plan.Histories.Follow; len(logs) == 1 && plan.Histories.Indexes[logs[0]] != "" {
		// One log: its index fits the history read, as the core named it.
		index = readIndex(filepath.Join(st.Dir, plan.Histories.Indexes[logs[0]]))
	}
	now := time.Now().UnixMilli()
	r, err := c.DoRestore(ctx, abi.Request{Op: "restore", Now: now}, index, history)
	if err != nil {
		return err
	}
	t, err := c.Do(ctx, abi.Request{Op: "table", Now: now})
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, t.Table)
	if r.Restore.Corrupt > 0 {
		fmt.Fprintf(stdout, "(%d corrupt history lines skipped)\n", r.Restore.Corrupt)
	}
	return nil
}

// loadCore finds, compiles and instantiates the core module. It does not start it: the storage
// op needs no init, and configure starts it once, with the project's config files.
func loadCore(ctx context.Context, path string) (*host.Core, error) {
	candidates := []string{path, os.Getenv("ASYNCAGENTS_WASM")}
	if exe, err := os.Executable(); err == nil {
		candidates = append(candidates, filepath.Join(filepath.Dir(exe), "asyncagents.wasm"))
	}
	candidates = append(candidates, filepath.Join("dist", "asyncagents.wasm"))
	for _, p := range candidates {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			continue
		}
		m, err := host.CompileFile(ctx, p)
		if err != nil {
			return nil, err
		}
		return m.New(ctx)
	}
	return nil, errors.New("the core module asyncagents.wasm was not found: pass --wasm or set ASYNCAGENTS_WASM")
}
