package ocevents

import (
	"encoding/json"

	"github.com/asyncagents/asyncagents/core/internal/jsonr"
)

// The hand-written decoders of the events a worker's stream brings most (a child's parts,
// messages and status) and of the other small ones. Each reads the fields its struct has, by
// their exact names, and skips the rest; it gives what encoding/json.Unmarshal gives, or says it
// cannot judge (jsonr.Unsure) and Decode asks encoding/json. FuzzDecodeMatchesEncodingJSON holds
// them to it.

// decodeFast is Decode's answer, and false when encoding/json must give it.
func decodeFast(typ string, props []byte) (any, bool) {
	switch typ {
	case "message.part.updated":
		return fast(props, readPartUpdated, func(PartUpdated) bool { return true })
	case "message.updated":
		return fast(props, readMessageUpdated, func(MessageUpdated) bool { return true })
	case "session.status":
		return fast(props, readSessionStatus, func(p SessionStatus) bool { return p.SessionID != "" })
	case "session.idle":
		return fast(props, readSessionIdle, func(SessionIdle) bool { return true })
	case "session.error":
		return fast(props, readSessionError, func(p SessionError) bool { return p.Error != nil })
	case "session.compacted":
		return fast(props, readSessionCompacted, func(p SessionCompacted) bool { return p.SessionID != "" })
	case "permission.replied":
		return fast(props, readPermissionReplied, func(p PermissionReplied) bool { return p.RequestID != "" })
	}
	return nil, false
}

func fast[T any](props []byte, read func(*jsonr.Reader, *T), wellFormed func(T) bool) (any, bool) {
	var p T
	r := jsonr.New(props)
	read(&r, &p)
	switch r.End() {
	case jsonr.Unsure:
		return nil, false
	case jsonr.Bad:
		return nil, true
	}
	if !wellFormed(p) {
		return nil, true
	}
	return p, true
}

// The fields of each object, for jsonr.Reader.Unknown: a key that matches one of them only
// case-insensitively is left to encoding/json.
var (
	partUpdatedKeys = []string{"part"}
	partKeys        = []string{"id", "sessionID", "messageID", "type", "callID", "tool", "text", "synthetic", "ignored", "reason", "time", "state"}
	partTimeKeys    = []string{"end"}
	partStateKeys   = []string{"status", "title"}
	infoKeys        = []string{"info"}
	messageKeys     = []string{"id", "sessionID", "role", "finish", "providerID", "modelID", "summary", "error", "time", "tokens", "cost"}
	messageTimeKeys = []string{"created", "completed"}
	tokensKeys      = []string{"input", "output", "reasoning", "cache"}
	cacheKeys       = []string{"read", "write"}
	errorKeys       = []string{"name", "data"}
	errorDataKeys   = []string{"message", "statusCode", "responseBody"}
	statusEventKeys = []string{"sessionID", "status"}
	statusKeys      = []string{"type", "message", "attempt", "next"}
	sessionIDKeys   = []string{"sessionID"}
	sessionErrKeys  = []string{"sessionID", "error"}
	repliedKeys     = []string{"sessionID", "requestID", "reply"}
)

func readPartUpdated(r *jsonr.Reader, p *PartUpdated) {
	if !r.Object() {
		return
	}
	for n := 0; r.Field(n); n++ {
		if string(r.Key()) != "part" {
			r.Unknown(partUpdatedKeys)
			continue
		}
		pt := &p.Part
		if !r.Object() {
			continue
		}
		for n := 0; r.Field(n); n++ {
			switch string(r.Key()) {
			case "id":
				r.String(&pt.ID)
			case "sessionID":
				r.String(&pt.SessionID)
			case "messageID":
				r.String(&pt.MessageID)
			case "type":
				r.String(&pt.Type)
			case "callID":
				r.String(&pt.CallID)
			case "tool":
				r.String(&pt.Tool)
			case "text":
				r.String(&pt.Text)
			case "synthetic":
				r.Bool(&pt.Synthetic)
			case "ignored":
				r.Bool(&pt.Ignored)
			case "reason":
				r.String(&pt.Reason)
			case "time":
				if r.Object() {
					for n := 0; r.Field(n); n++ {
						if string(r.Key()) == "end" {
							r.Int(&pt.Time.End)
						} else {
							r.Unknown(partTimeKeys)
						}
					}
				}
			case "state":
				if r.Object() {
					for n := 0; r.Field(n); n++ {
						switch string(r.Key()) {
						case "status":
							r.String(&pt.State.Status)
						case "title":
							r.String(&pt.State.Title)
						default:
							r.Unknown(partStateKeys)
						}
					}
				}
			default:
				r.Unknown(partKeys)
			}
		}
	}
}

func readMessageUpdated(r *jsonr.Reader, p *MessageUpdated) {
	if !r.Object() {
		return
	}
	for n := 0; r.Field(n); n++ {
		if string(r.Key()) != "info" {
			r.Unknown(infoKeys)
			continue
		}
		readMessageInfo(r, &p.Info)
	}
}

// readMessageInfo reads a message's info, in a message.updated event or a read of a session's
// messages.
func readMessageInfo(r *jsonr.Reader, in *MessageInfo) {
	if !r.Object() {
		return
	}
	for n := 0; r.Field(n); n++ {
		switch string(r.Key()) {
		case "id":
			r.String(&in.ID)
		case "sessionID":
			r.String(&in.SessionID)
		case "role":
			r.String(&in.Role)
		case "finish":
			r.String(&in.Finish)
		case "providerID":
			r.String(&in.Provider)
		case "modelID":
			r.String(&in.ModelID)
		case "summary":
			readSummary(r, &in.Summary)
		case "error":
			readErrorPtr(r, &in.Error)
		case "time":
			readMessageTime(r, &in.Time.Created, &in.Time.Completed)
		case "tokens":
			readTokens(r, &in.Usage)
		case "cost":
			r.Float(&in.Cost)
		default:
			r.Unknown(messageKeys)
		}
	}
}

// readSummary reads a message's summary as encoding/json reads a json.RawMessage, copied: the
// bytes are the request's, which the step does not keep.
func readSummary(r *jsonr.Reader, dst *json.RawMessage) {
	if raw := r.Raw(); raw != nil {
		*dst = append((*dst)[:0:0], raw...)
	}
}

// readMessageTime reads a message's time: when it was created and completed.
func readMessageTime(r *jsonr.Reader, created, completed *int64) {
	if !r.Object() {
		return
	}
	for n := 0; r.Field(n); n++ {
		switch string(r.Key()) {
		case "created":
			r.Int(created)
		case "completed":
			r.Int(completed)
		default:
			r.Unknown(messageTimeKeys)
		}
	}
}

// readTokens reads Usage.Tokens: null sets the pointer to nil, an object fills the struct it
// points to (a new one when nil), as encoding/json does.
func readTokens(r *jsonr.Reader, u *Usage) {
	if r.Null() {
		u.Tokens = nil
		return
	}
	if u.Tokens == nil {
		u.Tokens = &Tokens{}
	}
	t := u.Tokens
	if !r.Object() {
		return
	}
	for n := 0; r.Field(n); n++ {
		switch string(r.Key()) {
		case "input":
			r.Int(&t.Input)
		case "output":
			r.Int(&t.Output)
		case "reasoning":
			r.Int(&t.Reasoning)
		case "cache":
			if r.Object() {
				for n := 0; r.Field(n); n++ {
					switch string(r.Key()) {
					case "read":
						r.Int(&t.Cache.Read)
					case "write":
						r.Int(&t.Cache.Write)
					default:
						r.Unknown(cacheKeys)
					}
				}
			}
		default:
			r.Unknown(tokensKeys)
		}
	}
}

// readErrorPtr reads an *Error as readTokens reads its pointer.
func readErrorPtr(r *jsonr.Reader, dst **Error) {
	if r.Null() {
		*dst = nil
		return
	}
	if *dst == nil {
		*dst = &Error{}
	}
	e := *dst
	if !r.Object() {
		return
	}
	for n := 0; r.Field(n); n++ {
		switch string(r.Key()) {
		case "name":
			r.String(&e.Name)
		case "data":
			if r.Object() {
				for n := 0; r.Field(n); n++ {
					switch string(r.Key()) {
					case "message":
						r.String(&e.Data.Message)
					case "statusCode":
						r.IntN(&e.Data.StatusCode)
					case "responseBody":
						r.String(&e.Data.ResponseBody)
					default:
						r.Unknown(errorDataKeys)
					}
				}
			}
		default:
			r.Unknown(errorKeys)
		}
	}
}

func readSessionStatus(r *jsonr.Reader, p *SessionStatus) {
	if !r.Object() {
		return
	}
	for n := 0; r.Field(n); n++ {
		switch string(r.Key()) {
		case "sessionID":
			r.String(&p.SessionID)
		case "status":
			if r.Object() {
				for n := 0; r.Field(n); n++ {
					switch string(r.Key()) {
					case "type":
						r.String(&p.Status.Type)
					case "message":
						r.String(&p.Status.Message)
					case "attempt":
						r.IntN(&p.Status.Attempt)
					case "next":
						r.Int(&p.Status.Next)
					default:
						r.Unknown(statusKeys)
					}
				}
			}
		default:
			r.Unknown(statusEventKeys)
		}
	}
}

// readSessionID reads an object whose only field is sessionID.
func readSessionID(r *jsonr.Reader, dst *string) {
	if !r.Object() {
		return
	}
	for n := 0; r.Field(n); n++ {
		if string(r.Key()) == "sessionID" {
			r.String(dst)
		} else {
			r.Unknown(sessionIDKeys)
		}
	}
}

func readSessionIdle(r *jsonr.Reader, p *SessionIdle) { readSessionID(r, &p.SessionID) }

func readSessionCompacted(r *jsonr.Reader, p *SessionCompacted) { readSessionID(r, &p.SessionID) }

func readSessionError(r *jsonr.Reader, p *SessionError) {
	if !r.Object() {
		return
	}
	for n := 0; r.Field(n); n++ {
		switch string(r.Key()) {
		case "sessionID":
			r.String(&p.SessionID)
		case "error":
			readErrorPtr(r, &p.Error)
		default:
			r.Unknown(sessionErrKeys)
		}
	}
}

func readPermissionReplied(r *jsonr.Reader, p *PermissionReplied) {
	if !r.Object() {
		return
	}
	for n := 0; r.Field(n); n++ {
		switch string(r.Key()) {
		case "sessionID":
			r.String(&p.SessionID)
		case "requestID":
			r.String(&p.RequestID)
		case "reply":
			r.String(&p.Reply)
		default:
			r.Unknown(repliedKeys)
		}
	}
}
