package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"runtime"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/httpapi"
	"github.com/asyncagents/asyncagents/host"
)

// dashboard finds the project's running status API server by its server file (the plugin's
// live one when OpenCode runs, else `asyncagents serve`'s read-only one), asks it for a one-time
// code with the file's token, and opens its page with the code in the browser, or prints the URL;
// it says which server it took. The token never leaves this process: a browser's command line is
// readable by every local user, and its history keeps the link; the code opens the dashboard
// once, within a minute.
func dashboard(a core.CLIArgs, stdout, stderr io.Writer) error {
	ctx := context.Background()
	project, c, st, err := openCommand(ctx, a)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	live, err := host.LiveServers(st.ServerDir)
	if err != nil {
		return err
	}
	if len(live) == 0 {
		return errors.New(core.NoServerText("dashboard", project))
	}
	f := live[0] // the plugin's live server first (core.SortServers)
	link := core.DashboardLinkFor(f, "")
	if link.CodePath != "" {
		code, err := askCode(ctx, f, link.CodePath)
		if err != nil {
			return err
		}
		link = core.DashboardLinkFor(f, code)
	}
	if a.Print {
		fmt.Fprintln(stderr, core.PickedServerLine("dashboard", f)) // stdout stays the URL alone, for scripts
		fmt.Fprintln(stdout, link.URL)
		return nil
	}
	opener := map[string]string{"darwin": "open", "windows": "explorer"}[runtime.GOOS]
	if opener == "" {
		opener = "xdg-open"
	}
	if path, err := exec.LookPath(opener); err == nil {
		cmd := exec.Command(path, link.URL)
		if err := cmd.Start(); err == nil {
			_ = cmd.Process.Release()
			fmt.Fprintln(stdout, link.Opening)
			return nil
		}
	}
	fmt.Fprintln(stdout, link.Plain)
	return nil
}

// askCode asks the server for a dashboard code at path (POST, with the token).
func askCode(ctx context.Context, f core.ServerFile, path string) (string, error) {
	body, err := askServer(ctx, f, "dashboard", http.MethodPost, path)
	if err != nil {
		return "", err
	}
	var got httpapi.APICode
	if json.Unmarshal(body, &got) != nil || got.Code == "" {
		return "", errors.New(core.ServerAskFailure(f, "dashboard", fmt.Sprintf("%d %s", http.StatusOK, body)))
	}
	return got.Code, nil
}
