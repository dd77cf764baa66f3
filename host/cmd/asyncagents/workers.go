package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/abi"
	"github.com/asyncagents/asyncagents/host"
)

// workers lists the workers of the project's running server (found as dashboard finds it): their
// health, load and version, from its GET /v1/workers. Only a running plugin follows its workers'
// streams; a read-only `asyncagents serve` asks each worker's health itself, and its table says
// so. The core writes the table; --json prints the answer.
func workers(a core.CLIArgs, stdout, stderr io.Writer) error {
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
		return errors.New(core.NoServerText("workers", project))
	}
	f := live[0] // the plugin's live server first (core.SortServers)
	if line := core.PickedServerLine("workers", f); line != "" {
		fmt.Fprintln(stderr, line) // a read-only serve: the health it shows is its own asks
	}
	body, err := getWorkers(ctx, f)
	if err != nil {
		return err
	}
	if a.JSON {
		fmt.Fprintln(stdout, strings.TrimSpace(body))
		return nil
	}
	r, err := c.Do(ctx, abi.Request{Op: "workers.table", Now: time.Now().UnixMilli(), History: body})
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, r.Table)
	return nil
}

// getWorkers asks the server for GET /v1/workers, with the server file's token.
func getWorkers(ctx context.Context, f core.ServerFile) (string, error) {
	body, err := askServer(ctx, f, "workers", http.MethodGet, "/v1/workers")
	return string(body), err
}
