package ocserve

import (
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Where a failing model shows up (1.18.33): OpenCode retries 429 and 5xx by
// itself, 5 times (6 requests), publishing session.status {type:"retry",
// attempt, message, next} before each wait; then, as for a non-retryable
// 400 at once, it publishes session.error {sessionID, error}, stores the
// same error on the assistant message, and goes idle. The mock sends
// retry-after-ms: 100 (honoured) to keep this fast; without it the waits
// are 2, 4, 8, 16, 32 s (+ up to 25%), about 70 s in all.
func TestModelErrors(t *testing.T) {
	ctx := testCtx(t, 90*time.Second)
	fast := http.Header{"Retry-After-Ms": {"100"}}
	m := mockmodel.Start(t, func(r mockmodel.Request) mockmodel.Reply {
		switch r.LastUser {
		case prompt(400):
			return mockmodel.Reply{Status: 400}
		case prompt(429):
			return mockmodel.Reply{Status: 429, Header: fast}
		default:
			return mockmodel.Reply{Status: 500, Header: fast}
		}
	})
	s := Start(t, Options{ModelURL: m.URL()})
	rec := s.Record(t)

	cases := []struct {
		status    int
		requests  int
		retryable bool
		id        string
	}{{status: 400, requests: 1}, {status: 429, requests: 6, retryable: true}, {status: 500, requests: 6, retryable: true}}
	var wg sync.WaitGroup
	for i := range cases {
		c := &cases[i]
		id, err := s.CreateSession(ctx, prompt(c.status))
		require.NoError(t, err)
		c.id = id
		require.NoError(t, s.PromptAsync(ctx, id, "", prompt(c.status)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, s.WaitIdle(ctx, id))
		}()
	}
	wg.Wait()
	for _, c := range cases {
		t.Run(strconv.Itoa(c.status), func(t *testing.T) {
			checkModelError(t, s, m, rec, c.id, c.status, c.requests, c.retryable)
		})
	}
}

func prompt(status int) string { return "fail " + strconv.Itoa(status) }

func checkModelError(t *testing.T, s *Server, m *mockmodel.Server, rec *Recorder, id string, status, requests int, retryable bool) {
	ctx := testCtx(t, 30*time.Second)
	n := 0
	for _, r := range m.Turns() {
		if r.LastUser == prompt(status) {
			n++
		}
	}
	assert.Equal(t, requests, n, "model requests")

	msgs, err := s.Messages(ctx, id)
	require.NoError(t, err)
	last := msgs[len(msgs)-1].Info
	require.Equal(t, "assistant", last.Role)
	require.NotNil(t, last.Error, "assistant message error")
	assert.Equal(t, "APIError", last.Error.Name)
	assert.EqualValues(t, status, last.Error.Data["statusCode"])
	assert.Equal(t, retryable, last.Error.Data["isRetryable"])
	assert.Contains(t, last.Error.Message(), strconv.Itoa(status))
	assert.NotZero(t, last.Time.Completed)

	ev, err := rec.Wait(ctx, Is("session.error", id))
	require.NoError(t, err)
	var se struct {
		SessionID string
		Error     MessageError
	}
	decode(t, ev, &se)
	assert.Equal(t, *last.Error, se.Error)
	t.Logf("session.error: %s", ev.Properties)

	var retries []SessionStatus
	for _, e := range rec.Filter(Is("session.status", id)) {
		var st struct{ Status SessionStatus }
		decode(t, e, &st)
		if st.Status.Type == "retry" {
			retries = append(retries, st.Status)
		}
	}
	require.Len(t, retries, requests-1)
	for i, r := range retries {
		assert.Equal(t, i+1, r.Attempt)
		assert.Contains(t, r.Message, strconv.Itoa(status))
		assert.Positive(t, r.Next)
	}
	if len(retries) > 0 {
		t.Logf("first retry status: %+v", retries[0])
	}
}
