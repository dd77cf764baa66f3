package ocserve

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testCtx bounds a whole end-to-end test; every HTTP call inside has its
// own RequestTimeout as well.
func testCtx(t *testing.T, d time.Duration) context.Context {
	if testing.Short() {
		t.Skip("starts a real opencode serve")
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// A prompt reaches the mock and its text comes back as the assistant reply;
// the title request is answered by the mock on its own; Config agents,
// Files and Stop work.
func TestSmoke(t *testing.T) {
	ctx := testCtx(t, 90*time.Second)
	m := mockmodel.Start(t, func(r mockmodel.Request) mockmodel.Reply {
		if r.Model == "mock-b" {
			return mockmodel.Reply{Text: "helper here"}
		}
		return mockmodel.Reply{Text: "Hello from the mock"}
	})
	s := Start(t, Options{
		ModelURL: m.URL(),
		Config: map[string]any{"agent": map[string]any{"helper": map[string]any{
			"mode": "primary", "model": ModelB, "prompt": "You are the HELPER-MARKER agent.",
		}}},
		Files: map[string]string{"docs/notes.txt": "hello"},
	})
	t.Logf("spawn -> healthy: %s", s.Started)
	assert.Contains(t, s.Logs(), "opencode server listening on "+s.URL)
	assert.FileExists(t, filepath.Join(s.Dir, "docs", "notes.txt"))

	id, err := s.CreateSession(ctx, "")
	require.NoError(t, err)
	require.NoError(t, s.PromptAsync(ctx, id, "", "say hello"))
	require.NoError(t, s.WaitIdle(ctx, id))

	msgs, err := s.Messages(ctx, id)
	require.NoError(t, err)
	require.Len(t, msgs, 2)
	assert.Equal(t, "user", msgs[0].Info.Role)
	reply := msgs[1]
	assert.Equal(t, "assistant", reply.Info.Role)
	assert.Equal(t, "Hello from the mock", reply.Text())
	assert.Equal(t, "stop", reply.Info.Finish)
	assert.Nil(t, reply.Info.Error)
	assert.Equal(t, "mock", reply.Info.ProviderID)
	assert.Equal(t, "mock-a", reply.Info.ModelID)

	turns := m.Turns()
	require.Len(t, turns, 1)
	assert.Equal(t, "say hello", turns[0].LastUser)
	assert.Contains(t, turns[0].Tools, "bash")
	require.Eventually(t, func() bool {
		info, err := s.Session(ctx, id)
		return err == nil && info.Title == mockmodel.TitleText
	}, 15*time.Second, 100*time.Millisecond, "the title request is answered automatically")

	st, err := s.Status(ctx)
	require.NoError(t, err)
	assert.NotContains(t, st, id)

	// A configured agent with its own model.
	require.NoError(t, s.PromptAsync(ctx, id, "helper", "who are you"))
	require.NoError(t, s.WaitIdle(ctx, id))
	turns = m.Turns()
	require.Len(t, turns, 2)
	assert.Equal(t, "mock-b", turns[1].Model)
	assert.Contains(t, turns[1].System, "HELPER-MARKER")
	msgs, err = s.Messages(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, "helper here", msgs[len(msgs)-1].Text())

	require.NoError(t, s.Stop())
	t.Logf("SIGTERM -> exit: %s", s.StopTook)
	assert.Less(t, s.StopTook, 5*time.Second)
	select {
	case <-s.Exited():
	default:
		t.Fatal("Stop returned before the process exited")
	}
}

// A plugin given through Options.Plugins loads and its tool runs.
func TestPluginOption(t *testing.T) {
	ctx := testCtx(t, 90*time.Second)
	plugin := filepath.Join(t.TempDir(), "ping.js")
	require.NoError(t, os.WriteFile(plugin, []byte(`export const PingPlugin = async () => ({
  tool: {
    ping: {
      description: "Answers pong.",
      args: {},
      async execute(_args, ctx) { return "pong from " + ctx.sessionID },
    },
  },
})
`), 0o644))
	m := mockmodel.Start(t, func(r mockmodel.Request) mockmodel.Reply {
		if last := r.Messages[len(r.Messages)-1]; last.Role == "tool" {
			return mockmodel.Reply{Text: "tool said: " + last.Content}
		}
		return mockmodel.Reply{ToolCalls: []mockmodel.ToolCall{{Name: "ping"}}}
	})
	s := Start(t, Options{ModelURL: m.URL(), Plugins: []string{"file://" + plugin}})
	id, err := s.CreateSession(ctx, "plugin")
	require.NoError(t, err)
	require.NoError(t, s.PromptAsync(ctx, id, "", "call ping"))
	require.NoError(t, s.WaitIdle(ctx, id))

	turns := m.Turns()
	require.Len(t, turns, 2)
	assert.Contains(t, turns[0].Tools, "ping")
	msgs, err := s.Messages(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, "tool said: pong from "+id, msgs[len(msgs)-1].Text())
}
