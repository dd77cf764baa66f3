package bench

import (
	"os"
	"path/filepath"
	"testing"
)

// The notice parser reads the child session from the session_id line, and falls back to the task
// ID where a build writes none (task IDs were session IDs).
func TestOurNotices(t *testing.T) {
	newer := "Background task completed.\ntask_id: bg_abc\nsession_id: ses_child\nagent: general\n"
	if got := ours.notices(newer); len(got) != 1 || got[0] != (notice{"bg_abc", "ses_child"}) {
		t.Fatalf("new notice: %+v", got)
	}
	older := "Background task completed.\ntask_id: ses_child\nagent: general\n"
	if got := ours.notices(older); len(got) != 1 || got[0] != (notice{"ses_child", "ses_child"}) {
		t.Fatalf("old notice: %+v", got)
	}
	if got := ours.notices("✓ **Agent \"x\" finished in 1s.**\ntask_id: bg_abc\n"); got != nil {
		t.Fatalf("the visible part is no notice: %+v", got)
	}
	if id := ours.idOf("task_id: bg_abc\nsession_id: ses_x\n"); id != "bg_abc" {
		t.Fatalf("launch answer: %q", id)
	}
}

// A profile file's hops become a task's points and the segments' deltas; no file, no profile.
func TestProfilePoints(t *testing.T) {
	dir := t.TempDir()
	p, err := readProfile(filepath.Join(dir, "missing"))
	if err != nil || p.lines != 0 {
		t.Fatalf("missing file: %v %d", err, p.lines)
	}
	if pts := p.points(taskRun{CallID: "call_1", TaskID: "bg_1", LaunchStart: 1000, LaunchEnd: 1010}); pts != nil {
		t.Fatalf("points without a profile: %v", pts)
	}
	file := filepath.Join(dir, "profile.jsonl")
	lines := `{"t":1001.5,"hop":"tool.called","call":"call_1"}
{"t":1002,"hop":"core.accepted","call":"call_1","task":"bg_1"}
{"t":1003,"hop":"tool.returned","call":"call_1","task":"bg_1"}
{"t":1004,"hop":"session.create.sent","task":"bg_1"}
{"t":1020,"hop":"session.created","task":"bg_1","session":"ses_c"}
{"t":1021,"hop":"prompt.sent","task":"bg_1","session":"ses_c"}
{"t":1900,"hop":"idle","session":"ses_c"}
{"t":2505,"hop":"idle","session":"ses_c"}
{"t":2510,"hop":"notice.sent","task":"bg_1","session":"ses_parent"}
{"t":3000,"hop":"idle","session":"ses_c"}
not json
{"t":1001,"hop":"tool.called","call":"call_2"}
`
	if err := os.WriteFile(file, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err = readProfile(file); err != nil || p.lines != 11 {
		t.Fatalf("read: %v %d", err, p.lines)
	}
	task := taskRun{CallID: "call_1", TaskID: "bg_1", Session: "ses_c", LaunchStart: 1000, LaunchEnd: 1010, ChildDone: 2500, NoticeAt: 2530}
	task.Profile = p.points(task)
	want := map[string]float64{ptToolStart: 1000, ptCalled: 1001.5, ptAccepted: 1002, ptReturned: 1003, ptToolEnd: 1010,
		ptCreateSent: 1004, ptCreated: 1020, ptPromptSent: 1021, ptChildDone: 2500, ptIdle: 2505, ptNoticeSent: 2510, ptNoticeCreated: 2530}
	for k, v := range want {
		if task.Profile[k] != v {
			t.Errorf("%s: %v, want %v", k, task.Profile[k], v)
		}
	}
	d := hopDeltas([]taskRun{task})
	for seg, v := range map[string]float64{
		segment{From: ptToolStart, To: ptCalled}.String():         1.5,
		segment{From: ptReturned, To: ptToolEnd}.String():         7,
		segment{From: ptCreateSent, To: ptCreated}.String():       16,
		segment{From: ptChildDone, To: ptIdle}.String():           5,
		segment{From: ptNoticeSent, To: ptNoticeCreated}.String(): 20,
	} {
		if len(d[seg]) != 1 || d[seg][0] != v {
			t.Errorf("%s: %v, want %v", seg, d[seg], v)
		}
	}
	if st := profileStats("n3", []*run{{Case: "n3", System: ours.name, Tasks: []taskRun{task}}}); len(st) != len(segments) || st[0].N != 1 {
		t.Fatalf("stats: %+v", st)
	}
}
