package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/abi"
	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/host"
)

// openCommand opens the project a command line names (the working directory without --project)
// as openProject does.
func openCommand(ctx context.Context, a core.CLIArgs) (project string, c *host.Core, st core.Storage, err error) {
	dir := a.Project
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return "", nil, st, err
		}
	}
	return openProject(ctx, dir, a.Wasm, a.Port)
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
