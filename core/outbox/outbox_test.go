package outbox

import (
	"encoding/json"
	"testing"

	"github.com/asyncagents/asyncagents/core/ocevents"
	"github.com/stretchr/testify/require"
)

// The backoff doubles from RetryBaseMs and stops at RetryMaxMs.
func TestBackoffDoublesUpToItsCap(t *testing.T) {
	require.EqualValues(t, 1000, Backoff(1))
	require.EqualValues(t, 4000, Backoff(3))
	require.EqualValues(t, RetryMaxMs, Backoff(MaxTries))
}

// A notice refused MaxTries times is given up alone; the others keep their own count.
func TestGiveUpDropsOnlyTheExhausted(t *testing.T) {
	keep, tries, gaveUp := GiveUp([]int{MaxTries, 2, 0}, func(n int) int { return n })
	require.Equal(t, []int{2, 0}, keep)
	require.Equal(t, 2, tries)
	require.Equal(t, MaxTries, gaveUp)
	_, tries, gaveUp = GiveUp([]int{0}, func(n int) int { return n })
	require.Zero(t, tries+gaveUp, "nothing refused: nothing waits")
}

// Ready parents come back in order, once; a box is idle only with nothing queued or under way.
func TestBoxes(t *testing.T) {
	var o Boxes[string]
	require.Nil(t, o.Get("b"))
	o.Box("b").Queue = append(o.Box("b").Queue, "n")
	o.MarkReady("b")
	o.MarkReady("a")
	require.True(t, o.AnyReady())
	require.Equal(t, []string{"a", "b"}, o.TakeReady())
	require.False(t, o.AnyReady())
	b := o.Get("b")
	require.False(t, b.Idle())
	b.Queue, b.Sending = nil, MaxInFlight
	require.True(t, b.Waits())
	require.False(t, b.Idle())
	b.Sending = 0
	require.True(t, b.Idle())
	o.Delete("b")
	require.Zero(t, o.Len())
}

// A notice counts as delivered when a user message since it fell due names each task in a
// synthetic text; a restored task's end counts since EndSince when the text tells of an end.
func TestDelivered(t *testing.T) {
	var msgs []ocevents.Message
	require.NoError(t, json.Unmarshal([]byte(`[
		{"info":{"role":"user","time":{"created":10}},"parts":[{"type":"text","synthetic":true,"text":"bg_a ended"}]},
		{"info":{"role":"user","time":{"created":20}},"parts":[{"type":"text","text":"bg_b"}]},
		{"info":{"role":"assistant","time":{"created":30}},"parts":[{"type":"text","synthetic":true,"text":"bg_b"}]}]`), &msgs))
	ends := func(s string) bool { return len(s) > 5 && s[len(s)-5:] == "ended" }
	require.True(t, Delivered(msgs, []Task{{ID: "bg_a", OwedAt: 10}}, ends))
	require.False(t, Delivered(msgs, []Task{{ID: "bg_a", OwedAt: 11}}, ends), "named before the notice fell due")
	require.False(t, Delivered(msgs, []Task{{ID: "bg_a", OwedAt: 10}, {ID: "bg_b", OwedAt: 10}}, ends), "bg_b is named only outside a synthetic user text")
	require.True(t, Delivered(msgs, []Task{{ID: "bg_a", EndSince: 5}}, ends))
	require.False(t, Delivered(msgs, []Task{{ID: "bg_a"}}, ends), "a stall's notice is never found")
}
