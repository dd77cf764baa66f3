package core

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/conformance"
	"github.com/asyncagents/asyncagents/core/httpapi"
	"github.com/asyncagents/asyncagents/core/task"
)

// httpCaseFile is a file under core/conformance/http: tasks, config and time, then requests played
// against the machine's status API, as the hosts play them, each with the response it must give. expect is matched as a subset of the
// response's JSON (conformance.Match: objects key by key, arrays whole, "$contains", "$absent");
// bodyJSON, when given, is matched against the body parsed as JSON.
type httpCaseFile struct {
	Name   string           `json:"name"`
	Tasks  []task.Task      `json:"tasks"`
	Config config.APIConfig `json:"config"`
	Now    int64            `json:"now"`
	Cases  []httpCaseEntry  `json:"cases"`
}

type httpCaseEntry struct {
	Note    string          `json:"note"`
	Request httpapi.Request `json:"request"`
	Expect  json.RawMessage `json:"expect"`
	// Save names fields of the answer's body that later cases use as {name} (httpapi.Saved).
	Save []string `json:"save,omitempty"`
}

func TestHTTPConformance(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("conformance", "http", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	sort.Strings(files)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			require.NoError(t, err)
			dec := json.NewDecoder(strings.NewReader(string(raw)))
			dec.DisallowUnknownFields()
			var f httpCaseFile
			require.NoError(t, dec.Decode(&f))
			require.NotEmpty(t, f.Cases)
			// A machine over the file's tasks, as the hosts run it: a cancel changes it for the
			// cases after.
			var history strings.Builder
			for _, t := range f.Tasks {
				history.WriteString(HistoryLine(t))
			}
			m := NewMachine(config.Config{API: f.Config, MaxConcurrentStarts: 1000})
			res, _ := m.Restore(f.Now, history.String())
			require.Equal(t, len(f.Tasks), res.Restored)
			saved := httpapi.Saved{}
			for i, c := range f.Cases {
				req := saved.Into(httpapi.PortInHeaders(c.Request, c.Request.Port))
				if req.Method == "POST" && req.Entropy == "" {
					req.Entropy = fmt.Sprintf("%064x", i+1) // as a host passes randomness with every POST
				}
				resp, _ := m.ServeHTTPEffects(req, f.Config, f.Now)
				expect := strings.ReplaceAll(string(c.Expect), "{port}", strconv.Itoa(c.Request.Port))
				require.NoError(t, apiMatchHTTP(json.RawMessage(expect), resp), "case %d (%s)", i, c.Note)
				require.NoError(t, saved.Take(c.Save, []byte(resp.Body)), "case %d (%s)", i, c.Note)
			}
		})
	}
}

// matchHTTP checks resp against an expect object of conformance/http.
func apiMatchHTTP(expect json.RawMessage, resp httpapi.Response) error {
	var want map[string]any
	if err := json.Unmarshal(expect, &want); err != nil {
		return fmt.Errorf("bad expect: %w", err)
	}
	b, _ := json.Marshal(resp)
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		return err
	}
	if bodyWant, ok := want["bodyJSON"]; ok {
		delete(want, "bodyJSON")
		var body any
		if err := json.Unmarshal([]byte(resp.Body), &body); err != nil {
			return fmt.Errorf("body is not JSON: %q", resp.Body)
		}
		if err := conformance.Match(bodyWant, body, "body"); err != nil {
			return fmt.Errorf("%w\nbody: %s", err, resp.Body)
		}
	}
	if err := conformance.Match(want, got, "response"); err != nil {
		return fmt.Errorf("%w\nresponse: %s", err, b)
	}
	return nil
}
