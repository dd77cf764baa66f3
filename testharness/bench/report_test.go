package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func p(v float64) *float64 { return &v }
func turns(v int) *int     { return &v }

// fakeRuns is one round of case n10 for every system, with the given notice p50s.
func fakeRuns(project string, oursNotice, nativeNotice, floorNotice float64) []*run {
	return []*run{
		{Round: 1, Case: "n10", System: ours.name, Project: project, LaunchP50: 8, NoticeP50: p(oursNotice), ParentTurns: turns(1)},
		{Round: 1, Case: "n10", System: native.name, Project: project, LaunchP50: 20, NoticeP50: p(nativeNotice), ParentTurns: turns(2)},
		{Round: 1, Case: "n10", System: floor.name, Project: project, LaunchP50: 4},
		{Round: 1, Case: "n10", System: noticeFloor.name, Project: project, LaunchP50: 30, NoticeP50: p(floorNotice), ParentTurns: turns(0)},
	}
}

func targetNamed(ts []target, name string) *target {
	for i := range ts {
		if ts[i].Name == name {
			return &ts[i]
		}
	}
	return nil
}

// The notice floor is a fourth system: its notice gives the ratio ours/floor and a target that
// holds at or below it and misses above it.
func TestSummaryAgainstTheNoticeFloor(t *testing.T) {
	const name = "notice p50 ours <= the notice floor's"
	s := summarize(noGitCases, fakeRuns(projectNoGit, 500, 10, 250))[0]
	if s.NoticeOursFloor == nil || *s.NoticeOursFloor != 2 {
		t.Fatalf("ratio ours/floor: %v", s.NoticeOursFloor)
	}
	if nf := s.Systems[noticeFloor.name]; nf == nil || nf.Notice == nil || *nf.Notice != 250 || nf.Launch != 30 {
		t.Fatalf("notice floor summary: %+v", nf)
	}
	if tg := targetNamed(s.Targets, name); tg == nil || tg.Holds {
		t.Fatalf("500 ms against a floor of 250 must miss: %+v", tg)
	}
	s = summarize(noGitCases, fakeRuns(projectNoGit, 250, 10, 250))[0]
	if tg := targetNamed(s.Targets, name); tg == nil || !tg.Holds {
		t.Fatalf("at the floor must hold: %+v", tg)
	}
	// Without the floor's figures (an older run), no ratio and no target.
	runs := fakeRuns(projectGit, 9, 5, 0)
	runs[3].NoticeP50 = nil
	s = summarize(noGitCases, runs)[0]
	if s.NoticeOursFloor != nil || targetNamed(s.Targets, name) != nil {
		t.Fatalf("no floor figures: ratio %v, targets %+v", s.NoticeOursFloor, s.Targets)
	}
}

// The report prints the git project's table and the other folder's, each with the notice floor's
// column and ratio, and dist/bench.json keeps its fields, adding the other folder's beside them.
func TestReportPrintsBothProjects(t *testing.T) {
	git := summarize(noGitCases, fakeRuns(projectGit, 9, 5, 12))
	noGit := summarize(noGitCases, fakeRuns(projectNoGit, 500, 10, 250))
	for _, c := range git {
		c.Project = projectGit
	}
	for _, c := range noGit {
		c.Project = projectNoGit
	}
	rep := &report{OpenCodeVersion: "1.18.33", CPUs: 2, Rounds: 1, Load: []float64{2.5, 3, 4}, LoadAfter: []float64{3, 3, 4},
		Cases: git, ProfileNote: "no profile", CasesNoGit: noGit}
	var out bytes.Buffer
	printReport(&out, rep)
	text := out.String()
	for _, want := range []string{
		"load average [2.5 3 4] at the start, [3 3 4] at the end",
		"in a git project:",
		"in a folder that is no git repository:",
		"notice p50 ours / native / notice floor (ms)",
		"| 10 tasks, same length | 8 / 20 / 4 | 0.40 | 9 / 5 / 12 | 1.80 | 0.75 | 1 / 2 |",
		"| 10 tasks, same length | 8 / 20 / 4 | 0.40 | 500 / 10 / 250 | 50.00 | 2.00 | 1 / 2 |",
		"notice p50 ours <= the notice floor's: MISSED (500.0 ms vs 250.0 ms)",
		"notice p50 ours <= the notice floor's: holds (9.0 ms vs 12.0 ms)",
		"notice floor [30]; notice ours [500], native [10], notice floor [250]",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q:\n%s", want, text)
		}
	}
	if i, j := strings.Index(text, "in a git project:"), strings.Index(text, "in a folder that is no git repository:"); i > j {
		t.Errorf("the git project's table comes first")
	}

	raw, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"benchmark", "date", "opencode_version", "cpus", "rounds", "method", "cases", "warmup", "runs",
		"cases_no_git", "load_average", "load_average_after"} {
		if _, ok := fields[k]; !ok {
			t.Errorf("bench.json lacks %q", k)
		}
	}
	var cases []map[string]any
	if err := json.Unmarshal(fields["cases_no_git"], &cases); err != nil || len(cases) != 1 {
		t.Fatalf("cases_no_git: %v %v", err, cases)
	}
	if cases[0]["project"] != projectNoGit || cases[0]["notice_ratio_ours_floor"] != 2.0 {
		t.Errorf("cases_no_git[0]: project %v, ratio %v", cases[0]["project"], cases[0]["notice_ratio_ours_floor"])
	}
}

// The notice floor's notice names the child session as its task, its launch answer the same.
func TestNoticeFloorParsing(t *testing.T) {
	text := noticeFloorPrefix + "task_id: ses_child\n\nresult 3"
	if got := noticeFloor.notices(text); len(got) != 1 || got[0] != (notice{"ses_child", "ses_child"}) {
		t.Fatalf("notice: %+v", got)
	}
	if got := noticeFloor.notices("Background task completed.\ntask_id: bg_x\n"); got != nil {
		t.Fatalf("ours is no floor notice: %+v", got)
	}
	if id := noticeFloor.idOf("task_id: ses_child"); id != "ses_child" {
		t.Fatalf("launch answer: %q", id)
	}
	if !strings.Contains(noticeFloorPlugin, `Floor notice.\ntask_id: ${info.sessionID}`) {
		t.Fatalf("the plugin's notice does not start with the prefix the parser reads:\n%s", noticeFloorPlugin)
	}
}

// The TUI's figures join dist/bench.json as its "tui" field; every field already there stays as
// it was, and a missing file gets that field alone.
func TestAddTUIReportKeepsTheRest(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "dist", "bench.json")
	tr := &tuiReport{Rounds: 2, Method: tuiMethod, Cases: summarize(noGitCases, fakeRuns(projectTUI, 40, 20, 30))}
	if err := addTUIReport(path, tr); err != nil {
		t.Fatal(err)
	}
	var alone map[string]json.RawMessage
	raw, _ := os.ReadFile(path)
	if err := json.Unmarshal(raw, &alone); err != nil || len(alone) != 1 || alone["tui"] == nil {
		t.Fatalf("a new file: %v %s", err, raw)
	}

	rep := &report{Benchmark: "BenchmarkFanOut", Rounds: 5, Cases: summarize(noGitCases, fakeRuns(projectGit, 9, 5, 12))}
	before, _ := json.MarshalIndent(rep, "", "  ")
	if err := os.WriteFile(path, before, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := addTUIReport(path, tr); err != nil {
		t.Fatal(err)
	}
	raw, _ = os.ReadFile(path)
	var got, want map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal(before, &want)
	tui, _ := got["tui"].(map[string]any)
	if tui == nil || tui["rounds"] != 2.0 || len(tui["cases"].([]any)) != 1 {
		t.Fatalf("tui field: %v", got["tui"])
	}
	delete(got, "tui")
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the other fields changed:\n%v\nwant\n%v", got, want)
	}
}
