package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/abi"
	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/host"
)

// doctor says whether the plugin loaded for the project: it gathers the facts (the server files
// and whether their servers answer, OpenCode's and the plugin's config files, OpenCode's version)
// and prints the core's report (core/doctor.go), as the npm CLI does (plugin-js/cli/doctor.ts).
// errDoctorTrouble: the report names something that stops the plugin here (exit 1).
func doctor(a core.CLIArgs, stdout io.Writer) error {
	ctx := context.Background()
	project, c, st, err := openCommand(ctx, a)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	env := storageEnv(project, "")
	env.XDGConfigHome = os.Getenv("XDG_CONFIG_HOME")
	paths, err := c.Do(ctx, abi.Request{Op: "doctor.files", Env: &env})
	if err != nil {
		return err
	}
	r, err := c.InitWith(ctx, config.Config{}, host.ReadConfigFiles(st.ConfigFiles))
	if err != nil {
		return err
	}
	facts := core.DoctorFacts{Project: project, Files: readAll(paths.Paths), ConfigError: r.ConfigError, Probes: map[string]string{}, Health: map[string]string{}}
	facts.ServerFiles, facts.Procs = serverFacts(st.ServerDir)
	live, err := c.Do(ctx, abi.Request{Op: "servers", Doctor: &facts})
	if err != nil {
		return err
	}
	client := &http.Client{Timeout: 5 * time.Second}
	for _, s := range live.Servers {
		res, err := client.Get(s.Origin() + "/v1/health")
		switch {
		case err != nil:
			facts.Probes[s.URL] = err.Error()
		case res.StatusCode != http.StatusOK:
			facts.Probes[s.URL] = "GET /v1/health: " + strconv.Itoa(res.StatusCode)
		default:
			facts.Probes[s.URL] = ""
		}
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
			facts.Health[s.URL] = string(body)
			res.Body.Close()
		}
	}
	octx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(octx, "opencode", "--version").Output(); errors.Is(err, exec.ErrNotFound) {
		facts.OpenCodeNotFound = true
	} else if err != nil {
		facts.OpenCodeError = err.Error()
	} else {
		facts.OpenCodeVersion = strings.TrimSpace(string(out))
	}
	report, err := c.Do(ctx, abi.Request{Op: "doctor", Doctor: &facts})
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, report.Report)
	if report.Trouble {
		return errDoctorTrouble
	}
	return nil
}

// errDoctorTrouble is doctor's exit 1: the report said what, and the fix.
var errDoctorTrouble = errors.New("")

// readAll reads the files of paths that exist: their text, or why they could not be read.
func readAll(paths []string) []config.ConfigFile {
	var out []config.ConfigFile
	for _, p := range paths {
		b, err := os.ReadFile(p)
		switch {
		case err == nil:
			out = append(out, config.ConfigFile{Path: p, Text: string(b)})
		case !errors.Is(err, os.ErrNotExist) && !errors.Is(err, os.ErrInvalid):
			out = append(out, config.ConfigFile{Path: p, Error: err.Error()})
		}
	}
	return out
}

// serverFacts reads the project's server files and what is known of their pids.
func serverFacts(dir string) ([]config.ConfigFile, []core.ProcInfo) {
	entries, _ := os.ReadDir(dir)
	var paths []string
	var procs []core.ProcInfo
	for _, e := range entries {
		name := e.Name()
		pid, err := strconv.Atoi(strings.TrimSuffix(name, ".json"))
		if filepath.Ext(name) != ".json" || err != nil || pid <= 0 {
			continue
		}
		paths = append(paths, filepath.Join(dir, name))
		running, start := host.ProcStart(pid)
		procs = append(procs, core.ProcInfo{PID: pid, Running: running, Start: start})
	}
	return readAll(paths), procs
}
