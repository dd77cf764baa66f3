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
