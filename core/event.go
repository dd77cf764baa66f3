package core

import "encoding/json"

// Event kinds a host feeds to Machine.Step.
const (
	// EventToolCall: the model called one of our tools. The host answers the call with the
	// output of the tool.reply effect that carries the same CallID.
	EventToolCall = "tool.call"
	// EventToolAborted: the tool call's abort signal fired (the user stopped the parent).
	EventToolAborted = "tool.aborted"
	// EventEffectDone: the result of an effect whose Reply flag was set.
	EventEffectDone = "effect.done"
	// EventOpenCode: an event from OpenCode's event hook, as OpenCode sent it.
	EventOpenCode = "opencode"
	// EventTimer: a timer set by a timer.set effect fired.
	EventTimer = "timer.fired"
	// EventStart: the host is up and carries out effects; the core warms its caches.
	EventStart = "start"
	// EventWorkerState: a worker's event stream connected (Up, after its server.connected frame)
	// or dropped (not Up, with the reason in Error; a 401 says so).
	EventWorkerState = "worker.state"
	// EventAPIStreams: how many status API event streams are open (Open), from a host that
	// counts them: after one closed, and once at start (api_streams.go).
	EventAPIStreams = "api.streams"
)

// Event is one input to the state machine. Only the fields of its Type are read.
type Event struct {
	Type string `json:"type"`

	// tool.call and tool.aborted
	CallID    string          `json:"callID,omitempty"`
	Tool      string          `json:"tool,omitempty"`
	SessionID string          `json:"sessionID,omitempty"`
	MessageID string          `json:"messageID,omitempty"`
	Agent     string          `json:"agent,omitempty"`
	Args      json.RawMessage `json:"args,omitempty"`

	// effect.done
	EffectID int64           `json:"effectID,omitempty"`
	OK       bool            `json:"ok,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"`
	Error    string          `json:"error,omitempty"`

	// opencode: one event, or Events, several of one stream in the order it sent them (a
	// worker's, grouped as the worker.follow effect's FollowRule allows); Event comes first.
	Event  *OpenCodeEvent  `json:"event,omitempty"`
	Events []OpenCodeEvent `json:"events,omitempty"`
	// Worker: on an opencode event, the worker whose stream it came from ("" for the local
	// OpenCode); on worker.state, the worker whose stream changed, with Up (and Error when down).
	Worker string `json:"worker,omitempty"`
	Up     bool   `json:"up,omitempty"`

	// timer.fired
	TimerID string `json:"timerID,omitempty"`

	// api.streams
	Open int `json:"open,omitempty"`
}

// OpenCodeEvent is an event of OpenCode's bus, as the plugin's event hook receives it.
type OpenCodeEvent struct {
	Type       string          `json:"type"`
	Properties json.RawMessage `json:"properties"`
}
