package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/abi"
	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/host"
)

// projectFlags adds --project (and its older name --dir) to fs: the project directory OpenCode
// ran in, the working directory by default; and --wasm, the core module.
func projectFlags(fs *flag.FlagSet) (dir, wasm *string) {
	cwd, _ := os.Getwd()
	dir = fs.String("project", cwd, "the project directory OpenCode ran in")
	fs.StringVar(dir, "dir", cwd, "the same as --project")
	wasm = fs.String("wasm", "", "the core module (default: $ASYNCAGENTS_WASM, next to this program, or dist/)")
	return dir, wasm
}

// openCommand parses a command's flags (the project's, and those extra adds) and opens its
// project as openProject does.
func openCommand(ctx context.Context, name string, args []string, extra func(*flag.FlagSet)) (project string, c *host.Core, st core.Storage, err error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir, wasm := projectFlags(fs)
	if extra != nil {
		extra(fs)
	}
	if err := fs.Parse(args); err != nil {
		return "", nil, st, err
	}
	return openProject(ctx, *dir, *wasm, "")
}

// openProject is what every command starts with: the project's real path, the core loaded (the
// caller closes it), and where the core says the project's files are (port: as storageOf).
func openProject(ctx context.Context, dir, wasm, port string) (project string, c *host.Core, st core.Storage, err error) {
	if project, err = resolveProject(dir); err != nil {
		return "", nil, st, err
	}
	if c, err = loadCore(ctx, wasm); err != nil {
		return "", nil, st, err
	}
	if st, err = storageOf(ctx, c, project, port); err != nil {
		c.Close(ctx)
		return "", nil, st, err
	}
	return project, c, st, nil
}

// resolveProject is the project's absolute path with its symlinks resolved, as the plugin passes
// it to the core (plugin-js/index.ts), so a project reached through a symlink or a ".." has one
// history and one folder of server files. A path that does not exist is only made absolute.
func resolveProject(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, os.ErrNotExist) {
		return abs, nil
	}
	return real, err
}

// storageOf asks the core where project's files are; port is ASYNCAGENTS_API_PORT or --port.
func storageOf(ctx context.Context, c *host.Core, project, port string) (core.Storage, error) {
	env := storageEnv(project, port)
	st, err := c.Do(ctx, abi.Request{Op: "storage", Env: &env})
	if err != nil {
		return core.Storage{}, err
	}
	return *st.Storage, nil
}

// storageEnv is what the core needs to place the project's files.
func storageEnv(project, port string) abi.StorageEnv {
	home, _ := os.UserHomeDir()
	return abi.StorageEnv{XDGDataHome: os.Getenv("XDG_DATA_HOME"), Home: home, Directory: project, APIPort: port, PID: os.Getpid()}
}

// writeOwnServerFile writes this process's server file (its content is the core's) and returns
// a function that removes it, if it is still this process's.
func writeOwnServerFile(ctx context.Context, c *host.Core, path string, f core.ServerFile) (func(), error) {
	f.PID = os.Getpid()
	_, f.ProcStart = host.ProcStart(f.PID)
	r, err := c.Do(ctx, abi.Request{Op: "server.file", Server: &f})
	if err != nil {
		return nil, err
	}
	if err := host.WriteServerFile(path, r.ServerFile); err != nil {
		return nil, err
	}
	return func() { _ = host.RemoveServerFile(path, r.ServerFile) }, nil
}

// configure starts the core on cfg with the config files the plugin reads for this project
// (the storage op names them), so the CLI runs on the same options as OpenCode: the history
// limits among them. An invalid file is reported, and the CLI goes on without the files, as the
// plugin does.
func configure(ctx context.Context, c *host.Core, cfg config.Config, st core.Storage) error {
	r, err := c.InitWith(ctx, cfg, host.ReadConfigFiles(st.ConfigFiles))
	if err != nil {
		return err
	}
	if r.ConfigError != "" {
		fmt.Fprintln(os.Stderr, r.ConfigError)
	}
	return nil
}
