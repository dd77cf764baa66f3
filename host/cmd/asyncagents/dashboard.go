package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os/exec"
	"runtime"

	"github.com/asyncagents/asyncagents/host"
)

// dashboard finds the project's running status API server (the plugin's, or `asyncagents
// serve`'s) by its server file, and opens its page in the browser, or prints the URL.
func dashboard(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("dashboard", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := projectFlags(fs)
	wasm := fs.String("wasm", "", "the core module (default: $ASYNCAGENTS_WASM, next to this program, or dist/)")
	printOnly := fs.Bool("print", false, "print the URL, do not open it")
	if err := fs.Parse(args); err != nil {
		return err
	}
	project, err := resolveProject(*dir)
	if err != nil {
		return err
	}
	ctx := context.Background()
	c, err := loadCore(ctx, *wasm)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	st, err := storageOf(ctx, c, project, "")
	if err != nil {
		return err
	}
	live, err := host.LiveServers(st.ServerDir)
	if err != nil {
		return err
	}
	if len(live) == 0 {
		return fmt.Errorf("no running asyncagents server for %s: start OpenCode there, or run `asyncagents serve --project %s`", project, project)
	}
	url := live[0].DashboardURL()
	if *printOnly {
		fmt.Fprintln(stdout, url)
		return nil
	}
	opener := map[string]string{"darwin": "open", "windows": "explorer"}[runtime.GOOS]
	if opener == "" {
		opener = "xdg-open"
	}
	if path, err := exec.LookPath(opener); err == nil {
		cmd := exec.Command(path, url)
		if err := cmd.Start(); err == nil {
			_ = cmd.Process.Release()
			fmt.Fprintln(stdout, "opening", url)
			return nil
		}
	}
	fmt.Fprintln(stdout, url)
	return nil
}
