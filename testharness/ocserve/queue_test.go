package ocserve

import (
	"strings"
	"testing"
	"time"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Pins how OpenCode 1.18.33 treats prompts that arrive while a session is
// busy, noReply prompts and synthetic parts; the plugin's notification
// design depends on all three. Each scenario runs in its own session,
// named by its first user message, on one server.
func TestPromptQueueing(t *testing.T) {
	ctx := testCtx(t, 90*time.Second)
	m := mockmodel.Start(t, func(r mockmodel.Request) mockmodel.Reply {
		switch {
		case strings.HasSuffix(r.LastUser, "slow"):
			return mockmodel.Reply{Text: "slow reply", Delay: 1500 * time.Millisecond}
		case strings.HasSuffix(r.LastUser, "hang"):
			return mockmodel.Reply{Text: "never", Delay: time.Minute}
		}
		return mockmodel.Reply{Text: "reply to " + r.LastUser}
	})
	s := Start(t, Options{ModelURL: m.URL()})
	inFlight := func(text string) {
		_, err := m.WaitFor(ctx, func(r mockmodel.Request) bool { return r.LastUser == text })
		require.NoError(t, err)
	}
	turnsOf := func(first string) []mockmodel.Request {
		var out []mockmodel.Request
		for _, r := range m.Turns() {
			if len(r.Messages) > 0 && r.Messages[0].Content == first {
				out = append(out, r)
			}
		}
		return out
	}
	// Parallel subtests run once this function returns; the server stops
	// after the last of them.
	scenario := func(name string, run func(t *testing.T, id string)) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			id, err := s.CreateSession(ctx, name)
			require.NoError(t, err)
			run(t, id)
		})
	}

	// A second prompt on a busy session is queued: a second model request
	// follows the first and carries the whole history.
	scenario("queue", func(t *testing.T, id string) {
		require.NoError(t, s.PromptAsync(ctx, id, "", "q1 slow"))
		inFlight("q1 slow")
		require.NoError(t, s.PromptAsync(ctx, id, "", "q2"))
		require.NoError(t, s.WaitIdle(ctx, id))
		turns := turnsOf("q1 slow")
		require.Len(t, turns, 2)
		assert.Equal(t, []string{"user:q1 slow", "assistant:slow reply", "user:q2"}, roles(turns[1]))
	})

	// noReply on an idle session stores the message without a model call;
	// a synthetic part reaches the model as plain user text in the next turn.
	scenario("noreply-idle", func(t *testing.T, id string) {
		require.NoError(t, s.PromptAsyncBody(ctx, id, PromptBody{NoReply: true,
			Parts: []TextPart{{Type: "text", Text: "n-note", Synthetic: true}}}))
		require.NoError(t, s.PromptAsyncBody(ctx, id, PromptBody{
			Parts: []TextPart{{Type: "text", Text: "n-ask"}, {Type: "text", Text: "n-extra", Synthetic: true}}}))
		require.NoError(t, s.WaitIdle(ctx, id))
		turns := turnsOf("n-note")
		require.Len(t, turns, 1, "no turn for the noReply message alone")
		t.Logf("request messages: %s", userMessages(turns[0].Raw))
		assert.Equal(t, []string{"user:n-note", "user:n-ask\nn-extra"}, roles(turns[0]))
		msgs, err := s.Messages(ctx, id)
		require.NoError(t, err)
		require.Len(t, msgs, 3)
		assert.True(t, msgs[0].Parts[0].Synthetic)
		assert.False(t, msgs[1].Parts[0].Synthetic)
		assert.True(t, msgs[1].Parts[1].Synthetic)
	})

	// noReply on a busy session is not quiet: the running loop finds a user
	// message newer than its answer and makes one more model turn for it.
	scenario("noreply-busy", func(t *testing.T, id string) {
		require.NoError(t, s.PromptAsync(ctx, id, "", "b1 slow"))
		inFlight("b1 slow")
		require.NoError(t, s.PromptAsyncBody(ctx, id, PromptBody{NoReply: true,
			Parts: []TextPart{{Type: "text", Text: "b-note", Synthetic: true}}}))
		require.NoError(t, s.WaitIdle(ctx, id))
		turns := turnsOf("b1 slow")
		require.Len(t, turns, 2)
		assert.Equal(t, "b-note", turns[1].LastUser)
	})

	// Abort ends a run in flight: the assistant message gets an error.
	scenario("abort", func(t *testing.T, id string) {
		require.NoError(t, s.PromptAsync(ctx, id, "", "a1 hang"))
		inFlight("a1 hang")
		require.NoError(t, s.Abort(ctx, id))
		require.NoError(t, s.WaitIdle(ctx, id))
		msgs, err := s.Messages(ctx, id)
		require.NoError(t, err)
		last := msgs[len(msgs)-1].Info
		require.NotNil(t, last.Error)
		t.Logf("aborted assistant message: %s", last.Raw)
		assert.Equal(t, "MessageAbortedError", last.Error.Name)
	})
}

// roles renders a request's messages as "role:content".
func roles(r mockmodel.Request) []string {
	var out []string
	for _, m := range r.Messages {
		out = append(out, m.Role+":"+m.Content)
	}
	return out
}

// userMessages cuts the system prompt and tools out of a raw request.
func userMessages(raw []byte) string {
	s := string(raw)
	if i := strings.Index(s, `{"role":"user"`); i >= 0 {
		s = s[i:]
	}
	if i := strings.Index(s, `],"tools"`); i >= 0 {
		s = s[:i]
	}
	return s
}
