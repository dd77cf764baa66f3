package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/asyncagents/asyncagents/core"
)

// askServerTimeout bounds a command's request to its server: the server is on this machine.
const askServerTimeout = 10 * time.Second

// askServer sends command's request to f's status API (with the server file's token, when it
// has one) and returns the body of a 200 answer; any other outcome is the core's error, naming
// the server (core.ServerAskFailure).
func askServer(ctx context.Context, f core.ServerFile, command, method, path string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, askServerTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, f.Origin()+path, nil)
	if err != nil {
		return nil, err
	}
	if f.Token != "" {
		req.Header.Set("Authorization", "Bearer "+f.Token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, errors.New(core.ServerAskFailure(f, command, err.Error()))
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 4<<20))
	switch {
	case err != nil:
		return nil, errors.New(core.ServerAskFailure(f, command, err.Error()))
	case res.StatusCode != http.StatusOK:
		return nil, errors.New(core.ServerAskFailure(f, command, fmt.Sprintf("%d %s", res.StatusCode, body)))
	}
	return body, nil
}
