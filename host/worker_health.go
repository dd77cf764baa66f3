package host

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/config"
)

// WorkerHealthTimeout bounds a worker.health ask, headers and body (the core's WorkerHealthMs).
const WorkerHealthTimeout = core.WorkerHealthMs * time.Millisecond

// WorkerHealth carries out worker.health for `asyncagents serve` (the plugin does it in
// plugin-js/workers_effects.ts): GET /global/health on the worker, with basic auth whose password
// the host reads from the variable the effect names, when it sends the request. It answers
// {healthy, version, date}, or fails with the plain reason ABI.md names. Neither ever holds the
// password: it goes into the Authorization header only.
func WorkerHealth(ctx context.Context, r *core.Remote) (json.RawMessage, error) {
	if r == nil || r.URL == "" {
		return nil, errors.New("the effect says nowhere how to reach the worker")
	}
	u, err := url.Parse(r.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("%q is not an http:// or https:// URL", r.URL)
	}
	// The config refuses this already (core/config/workers.go); a host never sends the
	// password in clear off loopback whatever it is handed.
	if u.Scheme == "http" && !r.Insecure && !config.IsLoopback(u.Hostname()) {
		return nil, fmt.Errorf("http:// is only allowed on loopback, not to %s, unless insecure is set", u.Hostname())
	}
	password := os.Getenv(r.PasswordEnv)
	if r.PasswordEnv == "" || password == "" {
		name := r.PasswordEnv
		if name == "" {
			name = "(none named)"
		}
		return nil, fmt.Errorf("environment variable %s is not set", name)
	}
	user := r.Username
	if user == "" {
		user = "opencode"
	}
	credentials := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	scrub := strings.NewReplacer(credentials, "***", password, "***")
	ctx, cancel := context.WithTimeout(ctx, WorkerHealthTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(r.URL, "/")+"/global/health", nil)
	if err != nil {
		return nil, errors.New(scrub.Replace(err.Error()))
	}
	req.Header.Set("Authorization", "Basic "+credentials)
	res, err := healthClient.Do(req)
	if err != nil {
		return nil, errors.New(scrub.Replace(healthReason(err)))
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return nil, errors.New(scrub.Replace(healthReason(err)))
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return nil, errors.New(scrub.Replace(healthFailure(res, body)))
	}
	var h struct {
		Healthy bool   `json:"healthy"`
		Version string `json:"version"`
		Date    int64  `json:"date"` // the answer's Date header, ms: the core reads the worker's clock from it
	}
	if err := json.Unmarshal(body, &h); err != nil {
		return nil, fmt.Errorf("its answer is not OpenCode's health JSON (%d)", res.StatusCode)
	}
	if d, err := http.ParseTime(res.Header.Get("Date")); err == nil {
		h.Date = d.UnixMilli()
	}
	return json.Marshal(h)
}

// healthClient follows no redirect: a worker is an address of its own, and the password must
// not go elsewhere.
var healthClient = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// healthReason is the plain reason a request got no answer, in the plugin's words.
func healthReason(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("timed out after %g s", WorkerHealthTimeout.Seconds())
	case errors.Is(err, context.Canceled):
		return "stopped"
	case errors.Is(err, syscall.ECONNREFUSED):
		return core.WorkerRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return core.WorkerClosed
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// healthFailure is the plain reason of an answer that is no success, in the plugin's words.
func healthFailure(res *http.Response, body []byte) string {
	if res.StatusCode == http.StatusUnauthorized {
		return core.WorkerAuthFailed
	}
	if res.StatusCode >= 300 && res.StatusCode < 400 {
		where := res.Header.Get("Location")
		if where == "" {
			where = "elsewhere"
		}
		return fmt.Sprintf("redirected to %s (%d); give the worker's own URL", where, res.StatusCode)
	}
	msg := strings.TrimSpace(string(body))
	var e struct {
		Message string `json:"message"`
		Data    struct {
			Message string `json:"message"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &e) == nil && (e.Data.Message != "" || e.Message != "") {
		msg = e.Data.Message
		if msg == "" {
			msg = e.Message
		}
	}
	if len(msg) > 500 {
		msg = msg[:500]
	}
	if msg == "" {
		msg = http.StatusText(res.StatusCode)
	}
	return fmt.Sprintf("%s (%d)", msg, res.StatusCode)
}
