package ocserve

import (
	"context"
	"fmt"
	"time"
)

// pollEvery paces WaitIdle; each poll is two cheap local requests.
const pollEvery = 100 * time.Millisecond

// WaitIdle returns once sessionID has finished answering: it is absent from
// /session/status and its newest message is a finished assistant message
// (completed or failed). The message check matters: prompt_async answers
// before the user message is stored and before the status turns busy, so
// "not in status" alone is true for a moment after every prompt.
//
// A session whose newest message is a noReply user message never counts as
// idle; wait on that case another way (Messages, or a Recorder). Gives up
// with ctx, saying what it saw last.
func (s *Server) WaitIdle(ctx context.Context, sessionID string) error {
	var last string
	for {
		idle, why, err := s.idle(ctx, sessionID)
		if err == nil && idle {
			return nil
		}
		if err != nil {
			why = err.Error()
		}
		last = why
		select {
		case <-ctx.Done():
			return fmt.Errorf("session %s not idle: %s: %w", sessionID, last, ctx.Err())
		case <-time.After(pollEvery):
		}
	}
}

func (s *Server) idle(ctx context.Context, sessionID string) (bool, string, error) {
	st, err := s.Status(ctx)
	if err != nil {
		return false, "", err
	}
	if typ, ok := st[sessionID]; ok {
		return false, "status " + typ, nil
	}
	msgs, err := s.Messages(ctx, sessionID)
	if err != nil {
		return false, "", err
	}
	if len(msgs) == 0 {
		return false, "no messages yet", nil
	}
	m := msgs[len(msgs)-1].Info
	switch {
	case m.Role != "assistant":
		return false, "newest message is " + m.Role, nil
	case m.Time.Completed == 0 && m.Error == nil:
		return false, "newest assistant message not completed", nil
	}
	return true, "", nil
}
