package core

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// A trap (a panic the runtime could not recover, running out of memory, an out-of-bounds access)
// kills the instance the host was calling: the dead core cannot decide anything. So the host
// makes a new instance, and passes every trap it still keeps to that instance's init; the new
// core decides whether this is a loop, what the user reads, and which traps to keep for next
// time (ABI.md, "Traps").

// Trap is one trap the host saw: when (Unix ms) and the runtime's words.
type Trap struct {
	At    int64  `json:"at"`
	Error string `json:"error"`
}

// Recovery is init's answer to a host that restarts the core after a trap.
type Recovery struct {
	// Message is what the failed call answers (and, when Halt is set, every later one), and
	// what the host logs.
	Message string `json:"message"`
	// Halt: the traps are a loop; the host closes this instance and tries no more.
	Halt bool `json:"halt,omitempty"`
	// Traps are those the host passes to the next restart's init (the others are too old to
	// count).
	Traps []Trap `json:"traps,omitempty"`
}

// trapLoopCount traps within trapLoopWindowMs make a loop: the core is failing on what it is
// given, and a new instance would only fail again (each restart rereads the whole history).
const (
	trapLoopCount    = 3
	trapLoopWindowMs = 60_000
	maxTrapErrorLen  = 300
)

// Recover decides what a restart after traps means; the last trap is the newest.
func Recover(traps []Trap) *Recovery {
	if len(traps) == 0 {
		return nil
	}
	last := traps[len(traps)-1]
	var recent []Trap
	for _, t := range traps {
		if last.At-t.At < trapLoopWindowMs {
			recent = append(recent, Trap{At: t.At, Error: clip(t.Error, maxTrapErrorLen)})
		}
	}
	why := clip(oneLine(last.Error), maxTrapErrorLen)
	if len(recent) >= trapLoopCount {
		return &Recovery{Halt: true, Message: fmt.Sprintf(
			"asyncagents stopped: its core failed %d times within a minute (last: %s). Background tasks are no longer tracked; restart OpenCode to start it again.",
			len(recent), why)}
	}
	return &Recovery{Traps: recent, Message: fmt.Sprintf(
		"asyncagents: its core failed on this call (%s) and was restarted from the task history; this call was lost, and running tasks are still tracked. Try the call again.",
		why)}
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
