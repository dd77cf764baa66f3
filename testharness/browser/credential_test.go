package browser

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/internal/fixture"
)

// The dashboard's credential stays with its server (credential.mjs): the link `asyncagents
// dashboard` prints opens the dashboard once; another local server on another port, visited next
// by the same browser, receives nothing that the API accepts: every header, cookie and query
// value it got, and whatever its page could find in the browser, replayed against the API (as
// the bearer, as ?token=, as sent, with the API's own Origin forged), is refused with 401.
func TestDashboardCredentialStaysWithItsServer(t *testing.T) {
	root := repoRoot(t)
	history := fixture.History(20)
	for _, task := range varied() {
		history += core.HistoryLine(task)
	}
	s := startServe(t, root, history)
	printed := s.printedLink(t, root)
	require.Regexp(t, `^`+s.URL+`/\?code=[0-9a-f]{32}$`, printed)
	require.NotContains(t, printed, s.Token)

	other := startRecorder(t, s.URL)
	Script(t, root, "credential.mjs", 3*time.Minute, nil, "DASH_URL="+s.URL, "DASH_LINK="+printed, "DASH_OTHER="+other.url,
		"DASH_SHOTS="+filepath.Join(root, "dist", "screenshots"))

	got := other.received()
	reports := 0
	var secrets []string
	for _, r := range got {
		require.Empty(t, r.header.Values("Cookie"), "the other server got a cookie with %s %s", r.method, r.path)
		for name, vs := range r.header {
			for _, v := range vs {
				secrets = append(secrets, v)
				if name == "Cookie" || name == "Authorization" {
					secrets = append(secrets, splitValues(v)...)
				}
			}
		}
		if q, err := url.ParseQuery(r.query); err == nil {
			for _, vs := range q {
				secrets = append(secrets, vs...)
			}
		}
		if r.path == "/report" {
			reports++
			var rep struct {
				Cookie  string            `json:"cookie"`
				Session map[string]string `json:"session"`
				Local   map[string]string `json:"local"`
				API     []string          `json:"api"`
			}
			require.NoError(t, json.Unmarshal([]byte(r.body), &rep), r.body)
			t.Logf("the other server's page saw: cookie %q, sessionStorage %v, localStorage %v, the API: %v", rep.Cookie, rep.Session, rep.Local, rep.API)
			secrets = append(secrets, rep.Cookie)
			secrets = append(secrets, splitValues(rep.Cookie)...)
			for _, v := range rep.Session {
				secrets = append(secrets, v)
			}
			for _, v := range rep.Local {
				secrets = append(secrets, v)
			}
			for _, a := range rep.API {
				require.NotContains(t, a, " 200", "the other server's page read the API")
			}
		}
	}
	require.Equal(t, 2, reports, "the other server's page, in the same tab and in a new one, reported")

	// Replayed: each value as the bearer and as ?token=, from no Origin and from the API's own
	// (forged, as a local program can), and each request as it came, headers and all.
	asked := 0
	ask := func(method, path string, h http.Header) {
		req, err := http.NewRequest(method, s.URL+path, nil)
		require.NoError(t, err)
		req.Header = h
		res, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		require.Equal(t, http.StatusUnauthorized, res.StatusCode, "%s %s with %v: %s", method, path, h, body)
		asked++
	}
	seen := map[string]bool{}
	for _, v := range secrets {
		v = strings.TrimSpace(v)
		if v == "" || seen[v] {
			continue
		}
		seen[v] = true
		for _, origin := range []string{"", s.URL} {
			h := http.Header{"Authorization": {"Bearer " + v}}
			if origin != "" {
				h.Set("Origin", origin)
			}
			ask("GET", "/v1/tasks", h)
			if origin != "" {
				ask("POST", "/v1/tasks/bg_00000000000000000000a5/cancel", h) // with no Origin, 403 before any token
			}
			h.Del("Authorization")
			ask("GET", "/v1/events?token="+url.QueryEscape(v), h)
		}
	}
	for _, r := range got {
		h := r.header.Clone()
		h.Del("Host")
		ask("GET", "/v1/tasks", h)
		h.Set("Origin", s.URL)
		ask("GET", "/v1/tasks", h)
	}
	t.Logf("the other server got %d requests; %d values and requests replayed against the API, each refused", len(got), asked)
	require.NotEmpty(t, seen)
}

// splitValues splits a Cookie or Authorization header into the values in it.
func splitValues(v string) []string {
	var out []string
	for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == ';' || r == ' ' || r == ',' }) {
		if _, val, ok := strings.Cut(part, "="); ok {
			out = append(out, val)
		}
		out = append(out, part)
	}
	return out
}

// printedLink runs `asyncagents dashboard --print` for the served project, as a user does.
func (s served) printedLink(t *testing.T, root string) string {
	cmd := exec.Command(filepath.Join(root, "dist", "asyncagents"), "dashboard", "--print", "--project", s.Project, "--wasm", filepath.Join(root, "dist", "asyncagents.wasm"))
	cmd.Env = append(os.Environ(), "HOME="+s.Home, "XDG_DATA_HOME=")
	out, err := cmd.Output()
	require.NoError(t, err)
	return strings.TrimSpace(string(out))
}

// recorder is another local server, on a port of its own: it keeps every request it gets, and
// serves a page that reports what it finds in the browser and what it can read of the API.
type recorder struct {
	url  string
	mu   sync.Mutex
	got  []recorded
	page string
}

type recorded struct {
	method, path, query, body string
	header                    http.Header
}

func startRecorder(t *testing.T, api string) *recorder {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	r := &recorder{url: "http://" + l.Addr().String()}
	r.page = fmt.Sprintf(recorderPage, api)
	srv := &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return r
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	r.mu.Lock()
	r.got = append(r.got, recorded{method: req.Method, path: req.URL.Path, query: req.URL.RawQuery, body: string(body), header: req.Header.Clone()})
	r.mu.Unlock()
	if req.URL.Path == "/" {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, r.page)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (r *recorder) received() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.got...)
}

// recorderPage looks for anything of the dashboard's in the browser: cookies, both storages of
// its own origin, and the API read from here, with the browser's credentials and without.
const recorderPage = `<!doctype html><title>another local server</title><p id="s">probing</p><script>
(async () => {
  const all = (s) => Object.fromEntries(Object.keys(s).map((k) => [k, s.getItem(k)]));
  const report = { cookie: document.cookie, session: all(sessionStorage), local: all(localStorage), api: [] };
  for (const credentials of ["include", "omit"]) {
    try {
      const r = await fetch(%q + "/v1/tasks", { credentials });
      report.api.push(credentials + " " + r.status);
    } catch (e) {
      report.api.push(credentials + " " + String(e));
    }
  }
  await fetch("/report", { method: "POST", body: JSON.stringify(report) });
  document.getElementById("s").textContent = "reported";
})();
</script>`
