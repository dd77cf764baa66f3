// Package ocevents decodes the OpenCode events the machine reads into typed values. It decides
// nothing: Decode says what an event is, or that it is malformed (nil), and the machine decides
// what it means for its tasks. It imports none of the core.
package ocevents

import "encoding/json"

// Subscribed are the OpenCode event types the core reads. Hosts forward only these, so the busy
// stream of text deltas never crosses into the core.
func Subscribed() []string {
	return []string{"session.idle", "session.status", "session.error", "session.deleted", "session.updated", "session.compacted",
		"session.created", "message.updated", "message.part.updated", "permission.asked", "permission.replied",
		"server.instance.disposed", "global.disposed"}
}

// AbortedError is the name OpenCode gives the error of an interrupted turn.
const AbortedError = "MessageAbortedError"

// SessionIdle is session.idle: the session's turn is over.
type SessionIdle struct {
	SessionID string `json:"sessionID"`
}

// SessionStatus is session.status: idle, busy, or retry (OpenCode retries a provider error).
type SessionStatus struct {
	SessionID string `json:"sessionID"`
	Status    struct {
		Type    string `json:"type"`
		Message string `json:"message"` // the provider error OpenCode is retrying
		Attempt int    `json:"attempt"`
		Next    int64  `json:"next"` // when the next try goes, Unix ms
	} `json:"status"`
}

// SessionError is session.error; Error is never nil once decoded.
type SessionError struct {
	SessionID string `json:"sessionID"`
	Error     *Error `json:"error"`
}

// SessionDeleted is session.deleted; Info.ID is never empty once decoded.
type SessionDeleted struct {
	Info struct {
		ID string `json:"id"`
	} `json:"info"`
}

// SessionCompacted is session.compacted; SessionID is never empty once decoded.
type SessionCompacted struct {
	SessionID string `json:"sessionID"`
}

// SessionCreated is session.created of a session with a parent (a subagent's).
type SessionCreated struct {
	Info struct {
		ID       string `json:"id"`
		ParentID string `json:"parentID"`
	} `json:"info"`
}

// SessionUpdated is session.updated of a session with a title.
type SessionUpdated struct {
	Info struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	} `json:"info"`
}

// MessageUpdated is message.updated: a message's info, whole, each time it changes.
type MessageUpdated struct {
	Info MessageInfo `json:"info"`
}

// MessageInfo is the part of a message's info the core reads, in a message.updated event and in
// a read of a session's messages alike.
type MessageInfo struct {
	ID        string          `json:"id"`
	SessionID string          `json:"sessionID"`
	Role      string          `json:"role"`
	Finish    string          `json:"finish"`
	Provider  string          `json:"providerID"`
	ModelID   string          `json:"modelID"`
	Summary   json.RawMessage `json:"summary"` // true on a compaction's summary; an object on user messages
	Error     *Error          `json:"error"`
	Time      struct {
		Created   int64 `json:"created"`
		Completed int64 `json:"completed"`
	} `json:"time"`
	Usage
}

// PartUpdated is message.part.updated: a part, whole, each time it changes.
type PartUpdated struct {
	Part struct {
		ID        string `json:"id"`
		SessionID string `json:"sessionID"`
		MessageID string `json:"messageID"`
		Type      string `json:"type"`
		CallID    string `json:"callID"`
		Tool      string `json:"tool"`
		Text      string `json:"text"`
		Synthetic bool   `json:"synthetic"`
		Ignored   bool   `json:"ignored"`
		Reason    string `json:"reason"` // a step-finish part's: stop, tool-calls, length...
		Time      struct {
			End int64 `json:"end"`
		} `json:"time"`
		State struct {
			Status string `json:"status"` // a tool part's: pending, running, completed, error
			Title  string `json:"title"`
		} `json:"state"`
	} `json:"part"`
}

// PermissionAsked is permission.asked; ID is never empty once decoded.
type PermissionAsked struct {
	ID         string   `json:"id"`
	SessionID  string   `json:"sessionID"`
	Permission string   `json:"permission"`
	Patterns   []string `json:"patterns"`
	Tool       *struct {
		CallID string `json:"callID"`
	} `json:"tool"`
}

// PermissionReplied is permission.replied; RequestID is never empty once decoded.
type PermissionReplied struct {
	SessionID string `json:"sessionID"`
	RequestID string `json:"requestID"`
	Reply     string `json:"reply"`
}

// InstanceDisposed is server.instance.disposed: OpenCode dropped its instance of Directory (a
// config update, POST /instance/dispose), and reads that directory's config afresh at its next
// request. Directory is never empty once decoded; OpenCode writes it resolved (no symlink, no
// trailing slash).
type InstanceDisposed struct {
	Directory string `json:"directory"`
}

// GlobalDisposed is global.disposed: OpenCode dropped all its instances (PATCH /global/config,
// POST /global/dispose).
type GlobalDisposed struct{}

// Error is OpenCode's error object (MessageV2 errors): a name and data, with the provider's
// status and response body for an APIError.
type Error struct {
	Name string `json:"name"`
	Data struct {
		Message      string `json:"message"`
		StatusCode   int    `json:"statusCode"`
		ResponseBody string `json:"responseBody"`
	} `json:"data"`
}

// Usage is the usage on an OpenCode assistant message (message.updated's info, and the messages
// read from the session).
type Usage struct {
	Tokens *Tokens `json:"tokens"`
	Cost   float64 `json:"cost"`
}

// Tokens are a message's token counts, as OpenCode writes them.
type Tokens struct {
	Input     int64 `json:"input"`
	Output    int64 `json:"output"`
	Reasoning int64 `json:"reasoning"`
	Cache     struct {
		Read  int64 `json:"read"`
		Write int64 `json:"write"`
	} `json:"cache"`
}

// Message is the part of an OpenCode message (GET /session/:id/message) the core reads.
type Message struct {
	Info  MessageInfo   `json:"info"`
	Parts []MessagePart `json:"parts"`
}

// MessagePart is the part of a message's part the core reads.
type MessagePart struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	Synthetic bool   `json:"synthetic"`
	Ignored   bool   `json:"ignored"`
	// What a polled task's progress reads of a part (core/workers_poll_progress.go): its ID
	// (a step's), a tool call's ID, tool, state and title, a step's reason.
	ID     string `json:"id"`
	CallID string `json:"callID"`
	Tool   string `json:"tool"`
	Reason string `json:"reason"`
	State  struct {
		Status   string       `json:"status"`
		Title    string       `json:"title"`
		Metadata PartMetadata `json:"metadata"`
	} `json:"state"`
}

// Decode reads an event of a subscribed type into its typed value (SessionIdle,
// MessageUpdated...). It returns nil for a type the core does not read and for an event that does
// not parse or lacks what identifies it. The hot types are read by hand (fast.go), the others,
// and what the hand decoders leave, by encoding/json (decodeStd), which both give the same.
func Decode(typ string, props json.RawMessage) any {
	if v, ok := decodeFast(typ, props); ok {
		return v
	}
	return decodeStd(typ, props)
}

// decodeStd is Decode by encoding/json alone.
func decodeStd(typ string, props json.RawMessage) any {
	switch typ {
	case "session.idle":
		return decode[SessionIdle](props, func(SessionIdle) bool { return true })
	case "session.status":
		return decode(props, func(p SessionStatus) bool { return p.SessionID != "" })
	case "session.error":
		return decode(props, func(p SessionError) bool { return p.Error != nil })
	case "session.deleted":
		return decode(props, func(p SessionDeleted) bool { return p.Info.ID != "" })
	case "session.compacted":
		return decode(props, func(p SessionCompacted) bool { return p.SessionID != "" })
	case "session.created":
		return decode(props, func(p SessionCreated) bool { return p.Info.ID != "" && p.Info.ParentID != "" })
	case "session.updated":
		return decode(props, func(p SessionUpdated) bool { return p.Info.ID != "" && p.Info.Title != "" })
	case "message.updated":
		return decode[MessageUpdated](props, func(MessageUpdated) bool { return true })
	case "message.part.updated":
		return decode[PartUpdated](props, func(PartUpdated) bool { return true })
	case "permission.asked":
		return decode(props, func(p PermissionAsked) bool { return p.ID != "" })
	case "permission.replied":
		return decode(props, func(p PermissionReplied) bool { return p.RequestID != "" })
	case "server.instance.disposed":
		return decode(props, func(p InstanceDisposed) bool { return p.Directory != "" })
	case "global.disposed":
		return decode[GlobalDisposed](props, func(GlobalDisposed) bool { return true })
	}
	return nil
}

// decode unmarshals props into a T, and returns it when it parsed and is well formed.
func decode[T any](props json.RawMessage, wellFormed func(T) bool) any {
	var p T
	if json.Unmarshal(props, &p) != nil || !wellFormed(p) {
		return nil
	}
	return p
}
