package bench

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// Read from the database, a session is busy while its newest assistant message is unfinished or
// asked for tools; a notice after it that asks for no turn leaves it settled, and idle needs the
// newest message to be a finished answer.
func TestTUIBusyFromStorage(t *testing.T) {
	msgs := func(js string) []ocserve.Message {
		var out []ocserve.Message
		if err := json.Unmarshal([]byte(js), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	o := &tuiOpenCode{at: time.Now().Add(time.Hour), cached: map[string][]ocserve.Message{
		"ses_run":   msgs(`[{"info":{"id":"m1","role":"user","time":{"created":1}},"parts":[]},{"info":{"id":"m2","role":"assistant","time":{"created":2}},"parts":[]}]`),
		"ses_tools": msgs(`[{"info":{"id":"m2","role":"assistant","finish":"tool-calls","time":{"created":2,"completed":3}},"parts":[]}]`),
		"ses_quiet": msgs(`[{"info":{"id":"m2","role":"assistant","finish":"stop","time":{"created":2,"completed":3}},"parts":[]},{"info":{"id":"m3","role":"user","time":{"created":4}},"parts":[]}]`),
		"ses_done":  msgs(`[{"info":{"id":"m2","role":"assistant","finish":"stop","time":{"created":2,"completed":3}},"parts":[]}]`),
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for s, want := range map[string]bool{"ses_run": true, "ses_tools": true, "ses_quiet": false, "ses_done": false, "ses_none": false} {
		if got, err := o.busy(ctx, s); err != nil || got != want {
			t.Errorf("%s busy: %v (%v), want %v", s, got, err, want)
		}
	}
	if err := o.waitIdle(ctx, "ses_done"); err != nil {
		t.Errorf("ses_done: %v", err)
	}
	short, cancel2 := context.WithTimeout(ctx, 3*tuiPollEvery)
	defer cancel2()
	if err := o.waitIdle(short, "ses_quiet"); err == nil {
		t.Errorf("a user message last is not idle")
	}
}
