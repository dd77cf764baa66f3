package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The remote floor is told a fan-out's end from the lines its notifier writes: only the parent
// asked about counts, and a file not yet written means nothing is told.
func TestToldFileCountsOneParentsChildren(t *testing.T) {
	path := filepath.Join(t.TempDir(), "told")
	f := toldFile{path}
	if told, err := f.allTold(context.Background(), "ses_p", 1); err != nil || told {
		t.Fatalf("no file: told %v, err %v", told, err)
	}
	if err := os.WriteFile(path, []byte("ses_p ses_a\nses_q ses_b\nses_p ses_c\nses_px ses_d\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		parent string
		n      int
		want   bool
	}{{"ses_p", 2, true}, {"ses_p", 3, false}, {"ses_q", 1, true}, {"ses_px", 2, false}} {
		if told, err := f.allTold(context.Background(), tc.parent, tc.n); err != nil || told != tc.want {
			t.Errorf("%s of %d: told %v, err %v; want %v", tc.parent, tc.n, told, err, tc.want)
		}
	}
}

// The floor's two halves agree on their formats: the plugin's launch line is the notifier's
// "parent child worker", and the notifier's notice is one the notice floor's parser reads.
func TestRemoteFloorHalvesAgree(t *testing.T) {
	if !strings.Contains(remoteFloorPlugin, `ctx.sessionID + " " + id + " " + args.worker + "\n"`) {
		t.Fatalf("the plugin's launch line is not the notifier's:\n%s", remoteFloorPlugin)
	}
	text := noticeFloorPrefix + "task_id: ses_child\n\nresult 3"
	if got := remoteFloor.notices(text); len(got) != 1 || got[0] != (notice{"ses_child", "ses_child"}) {
		t.Fatalf("notice: %+v", got)
	}
	if !strings.Contains(remoteFloorPlugin, `return "task_id: " + id`) || remoteFloor.idOf("task_id: ses_child") != "ses_child" {
		t.Fatal("the launch answer does not name the child as the parser reads it")
	}
}

// The notifier tells only the children launched since it started: an earlier fan-out's children,
// told in their own round, would otherwise be told again, and their parent woken again, in every
// later round (the floor's figure grew round by round before).
func TestLaunchedSinceSkipsEarlierFanOuts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "launched")
	if got := launchedSince(path, fileSize(path)); len(got) != 0 {
		t.Fatalf("no file: %v", got)
	}
	if err := os.WriteFile(path, []byte("ses_old ses_a w1\nses_old ses_b w2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	from := fileSize(path)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("ses_new ses_c w1\nbroken line\nses_new ses_d w2\n")
	f.Close()
	got := launchedSince(path, from)
	want := [][3]string{{"ses_new", "ses_c", "w1"}, {"ses_new", "ses_d", "w2"}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("launched since the start: %v; want %v", got, want)
	}
	if all := launchedSince(path, 0); len(all) != 4 {
		t.Fatalf("the whole file: %v", all)
	}
}

// The streams floor is summed as the others are, and its figures are left out of a run without it.
func TestSummaryReadsTheStreamsFloorWhenItRan(t *testing.T) {
	samples := map[string][]workersSample{
		"local":  {{cpu: 20}, {cpu: 22}, {cpu: 21}},
		"remote": {{cpu: 2.2}, {cpu: 2.0}, {cpu: 2.1}},
		"floor":  {{cpu: 1.6}, {cpu: 1.5}, {cpu: 1.7}},
	}
	if rep := summarizeWorkers(samples); rep.CPUStreamsS != 0 || rep.StreamsRatio != 0 || rep.OursOverStreams != 0 {
		t.Fatalf("no streams floor ran, yet: %+v", rep)
	}
	samples["streams"] = []workersSample{{cpu: 1.9}, {cpu: 1.75}, {cpu: 1.8}}
	rep := summarizeWorkers(samples)
	if rep.CPUStreamsS != 1.8 || rep.StreamsRatio != 1.8/21 || rep.OursOverStreams != 2.1/1.8 {
		t.Fatalf("streams floor: %.3f s, %.4f of local, ours %.3f of it", rep.CPUStreamsS, rep.StreamsRatio, rep.OursOverStreams)
	}
	if len(rep.Runs["streams"]) != 3 {
		t.Fatalf("its rounds: %v", rep.Runs["streams"])
	}
}
