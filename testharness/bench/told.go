package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// toldProber is an opencode that can say cheaply whether a fan-out's tasks have all ended and
// had their notices accepted by OpenCode. fanOut asks it at every pace and reads the parent's
// conversation only once it says yes: the conversation read is work for the parent's OpenCode,
// which a benchmark of the parent's CPU would otherwise measure along with the product.
type toldProber interface {
	allTold(ctx context.Context, parent string, n int) (bool, error)
}

// statusAPI is the plugin's status API inside the parent (ASYNCAGENTS_API_PORT, with
// ASYNCAGENTS_API_AUTH=none), at url. Its answers come from the plugin's core, whatever the
// placement of the tasks, so asking it costs the parent the same for local and remote children.
type statusAPI struct{ url string }

// allTold: the parent's n tasks are all listed (the newest n tasks, newest first, are this
// fan-out's: it launched last), each ended, with its notice accepted (notifiedAt set, none owed).
func (a statusAPI) allTold(ctx context.Context, parent string, n int) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/v1/tasks?limit=%d", a.url, n), nil)
	if err != nil {
		return false, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return false, err
	}
	if res.StatusCode != http.StatusOK {
		return false, fmt.Errorf("GET /v1/tasks: status %d: %s", res.StatusCode, body)
	}
	return toldIn(body, parent, n)
}

// toldIn says whether a /v1/tasks answer lists n tasks of parent, each ended and told.
func toldIn(body []byte, parent string, n int) (bool, error) {
	var list struct {
		Tasks []struct {
			Parent     string `json:"parentSessionID"`
			Status     string `json:"status"`
			NoticeOwed int64  `json:"noticeOwed"`
			NotifiedAt int64  `json:"notifiedAt"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return false, fmt.Errorf("GET /v1/tasks: %w", err)
	}
	told := 0
	for _, t := range list.Tasks {
		ended := t.Status == "completed" || t.Status == "error" || t.Status == "cancelled"
		if t.Parent == parent && ended && t.NoticeOwed == 0 && t.NotifiedAt != 0 {
			told++
		}
	}
	return told >= n, nil
}
