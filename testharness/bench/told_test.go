package bench

import "testing"

// toldIn counts only the parent's tasks that ended and whose notice OpenCode accepted: a task
// still running, one whose notice is owed, one never notified and another parent's do not count.
func TestToldInCountsOnlyTheParentsToldTasks(t *testing.T) {
	told := `{"id":"a","parentSessionID":"p","status":"completed","notifiedAt":5}`
	cases := []struct {
		name string
		list string
		want bool
	}{
		{"all told", `{"tasks":[` + told + `,{"parentSessionID":"p","status":"error","notifiedAt":6}]}`, true},
		{"one running", `{"tasks":[` + told + `,{"parentSessionID":"p","status":"running"}]}`, false},
		{"one owed", `{"tasks":[` + told + `,{"parentSessionID":"p","status":"completed","noticeOwed":4}]}`, false},
		{"one never notified", `{"tasks":[` + told + `,{"parentSessionID":"p","status":"cancelled"}]}`, false},
		{"another parent's", `{"tasks":[` + told + `,{"parentSessionID":"q","status":"completed","notifiedAt":6}]}`, false},
		{"not yet listed", `{"tasks":[` + told + `]}`, false},
	}
	for _, c := range cases {
		got, err := toldIn([]byte(c.list), "p", 2)
		if err != nil || got != c.want {
			t.Errorf("%s: toldIn = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	if _, err := toldIn([]byte(`<html>`), "p", 2); err == nil {
		t.Error("toldIn accepted an answer that is not JSON")
	}
}
