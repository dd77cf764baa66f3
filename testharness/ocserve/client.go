package ocserve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// Do sends one API request with its own RequestTimeout (inside ctx) and
// decodes a JSON answer into out (skipped when out is nil or the answer is
// empty). Every request names the project with x-opencode-directory.
func (s *Server) Do(ctx context.Context, method, path string, body, out any) error {
	ctx, cancel := context.WithTimeout(ctx, RequestTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("x-opencode-directory", s.Dir)
	req.Header.Set("Accept", "application/json")
	s.authorize(req)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: read: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return &HTTPError{Method: method, Path: path, Status: resp.StatusCode, Body: string(b)}
	}
	if out == nil || len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s: decode %q: %w", method, path, truncate(b, 300), err)
	}
	return nil
}

// HTTPError is a non-2xx API answer.
type HTTPError struct {
	Method, Path string
	Status       int
	Body         string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("%s %s: HTTP %d: %s", e.Method, e.Path, e.Status, truncate([]byte(e.Body), 500))
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// CreateSession creates a root session and returns its ID.
func (s *Server) CreateSession(ctx context.Context, title string) (string, error) {
	body := map[string]any{}
	if title != "" {
		body["title"] = title
	}
	var info SessionInfo
	if err := s.Do(ctx, http.MethodPost, "/session", body, &info); err != nil {
		return "", err
	}
	return info.ID, nil
}

// PromptAsync sends one text prompt and returns when OpenCode accepted it
// (204), before the model runs. An empty agent means the default agent.
func (s *Server) PromptAsync(ctx context.Context, sessionID, agent, text string) error {
	return s.PromptAsyncBody(ctx, sessionID, PromptBody{Agent: agent, Parts: []TextPart{{Type: "text", Text: text}}})
}

// PromptAsyncBody sends a full prompt body (noReply, synthetic parts, model).
func (s *Server) PromptAsyncBody(ctx context.Context, sessionID string, body PromptBody) error {
	return s.Do(ctx, http.MethodPost, "/session/"+url.PathEscape(sessionID)+"/prompt_async", body, nil)
}

// Messages lists a session's messages with their parts, oldest first.
func (s *Server) Messages(ctx context.Context, sessionID string) ([]Message, error) {
	var out []Message
	err := s.Do(ctx, http.MethodGet, "/session/"+url.PathEscape(sessionID)+"/message", nil, &out)
	return out, err
}

// Children lists the sessions whose parentID is sessionID.
func (s *Server) Children(ctx context.Context, sessionID string) ([]SessionInfo, error) {
	var out []SessionInfo
	err := s.Do(ctx, http.MethodGet, "/session/"+url.PathEscape(sessionID)+"/children", nil, &out)
	return out, err
}

// Session reads one session.
func (s *Server) Session(ctx context.Context, sessionID string) (SessionInfo, error) {
	var out SessionInfo
	err := s.Do(ctx, http.MethodGet, "/session/"+url.PathEscape(sessionID), nil, &out)
	return out, err
}

// Status maps session ID to status type ("busy", "retry"); OpenCode lists
// only sessions that are not idle.
func (s *Server) Status(ctx context.Context) (map[string]string, error) {
	full, err := s.StatusFull(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(full))
	for id, st := range full {
		out[id] = st.Type
	}
	return out, nil
}

// StatusFull is Status with the retry details.
func (s *Server) StatusFull(ctx context.Context) (map[string]SessionStatus, error) {
	var out map[string]SessionStatus
	err := s.Do(ctx, http.MethodGet, "/session/status", nil, &out)
	return out, err
}

// Abort stops a session's current run.
func (s *Server) Abort(ctx context.Context, sessionID string) error {
	return s.Do(ctx, http.MethodPost, "/session/"+url.PathEscape(sessionID)+"/abort", nil, nil)
}

// authorize adds the server's basic auth (Options.Password) to req; nothing when it has none.
func (s *Server) authorize(req *http.Request) {
	if s.password != "" {
		req.SetBasicAuth("opencode", s.password)
	}
}
