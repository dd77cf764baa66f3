package host_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/conformance"
	"github.com/asyncagents/asyncagents/host"
	"github.com/asyncagents/asyncagents/internal/wasmbuild"
)

var module *host.Module

func compiled(t *testing.T) *host.Module {
	t.Helper()
	if module == nil {
		m, err := host.CompileFile(context.Background(), wasmbuild.Build(t))
		require.NoError(t, err)
		module = m
	}
	return module
}

// TestConformanceWasm is the twin of core/conformance's TestNative: the same cases, through the
// .wasm under wazero.
func TestConformanceWasm(t *testing.T) {
	ctx := context.Background()
	cases, err := conformance.Cases()
	require.NoError(t, err)
	for _, c := range cases {
		t.Run(c.File, func(t *testing.T) {
			inst, err := compiled(t).New(ctx)
			require.NoError(t, err)
			defer inst.Close(ctx)
			require.NoError(t, conformance.Run(c, func(req []byte) ([]byte, error) { return inst.Call(ctx, req) }))
		})
	}
}

func TestTypedAPI(t *testing.T) {
	ctx := context.Background()
	inst, err := compiled(t).New(ctx)
	require.NoError(t, err)
	defer inst.Close(ctx)

	init, err := inst.Init(ctx, core.Config{PollIntervalMs: 500})
	require.NoError(t, err)
	require.Equal(t, int64(500), init.Config.PollIntervalMs)
	require.Len(t, init.Tools, 5)

	effects, err := inst.Step(ctx, 1, core.Event{Type: core.EventToolCall, CallID: "c", Tool: core.ToolOutput, Args: []byte(`{"task_id":"nope"}`)})
	require.NoError(t, err)
	require.Len(t, effects, 1)
	require.Contains(t, effects[0].Error, `no background task has task_id "nope"`)

	_, err = inst.Do(ctx, core.Request{Op: "panic"})
	require.ErrorContains(t, err, "core panic")
	// The instance survives a panic in the core.
	tasks, err := inst.Tasks(ctx)
	require.NoError(t, err)
	require.Empty(t, tasks)
}
