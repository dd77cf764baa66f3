package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// sysSummary is one system's figures in one case: each round's p50, and the median over rounds.
type sysSummary struct {
	LaunchRounds []float64 `json:"launch_p50_rounds_ms"`
	NoticeRounds []float64 `json:"notice_p50_rounds_ms,omitempty"`
	TurnsRounds  []int     `json:"parent_turns_rounds,omitempty"`
	Launch       float64   `json:"launch_p50_ms"`           // median over rounds of the round's p50
	Notice       *float64  `json:"notice_p50_ms,omitempty"` // the same for notices
	Turns        *float64  `json:"parent_turns,omitempty"`  // median over rounds
}

// target is one goal checked against a case's figures.
type target struct {
	Name   string `json:"name"`
	Holds  bool   `json:"holds"`
	Detail string `json:"detail"`
}

// hopStat is one segment of the plugin's hop profile: the p50 over all tasks of all rounds.
type hopStat struct {
	Group   string  `json:"group"`
	Segment string  `json:"segment"`
	P50     float64 `json:"p50_ms"`
	N       int     `json:"n"`
}

// caseSummary is one case over every round, all systems side by side.
type caseSummary struct {
	Case    string                 `json:"case"`
	Name    string                 `json:"name"`
	Project string                 `json:"project,omitempty"` // projectGit or projectNoGit
	N       int                    `json:"tasks"`
	Delays  []int64                `json:"delays_ms"`
	Systems map[string]*sysSummary `json:"systems"`
	// Ratios of the medians; absent when the denominator is 0.
	LaunchOursNative *float64 `json:"launch_ratio_ours_native,omitempty"`
	NoticeOursNative *float64 `json:"notice_ratio_ours_native,omitempty"`
	LaunchOursFloor  *float64 `json:"launch_ratio_ours_floor,omitempty"`
	// NoticeOursFloor is ours over the notice floor's (notice_floor.go).
	NoticeOursFloor *float64  `json:"notice_ratio_ours_floor,omitempty"`
	Targets         []target  `json:"targets"`
	Profile         []hopStat `json:"profile,omitempty"`
}

// report is dist/bench.json.
type report struct {
	Benchmark       string `json:"benchmark"`
	Date            string `json:"date"`
	OpenCodeVersion string `json:"opencode_version"`
	CPUs            int    `json:"cpus"`
	OS              string `json:"os"`
	Rounds          int    `json:"rounds"`
	Method          string `json:"method"`
	// Load and LoadAfter are the machine's load averages (1, 5, 15 min) at the start and the end.
	Load      []float64 `json:"load_average,omitempty"`
	LoadAfter []float64 `json:"load_average_after,omitempty"`
	// Cases, Warmup and Runs are the git project's; the *NoGit fields the same in a folder that is
	// no git repository.
	Cases       []*caseSummary `json:"cases"`
	ProfileNote string         `json:"profile_note,omitempty"`
	Warmup      []*run         `json:"warmup"`
	Runs        []*run         `json:"runs"`
	CasesNoGit  []*caseSummary `json:"cases_no_git,omitempty"`
	WarmupNoGit []*run         `json:"warmup_no_git,omitempty"`
	RunsNoGit   []*run         `json:"runs_no_git,omitempty"`
}

// The projects a fan-out runs in.
const (
	projectGit   = "git"
	projectNoGit = "no-git"
)

// loadAverage is /proc/loadavg's three figures, or nil where there is none.
func loadAverage() []float64 {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return nil
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return nil
	}
	var out []float64
	for _, s := range f[:3] {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil
		}
		out = append(out, v)
	}
	return out
}

const method = "One opencode serve holds asyncagents (dist/asyncagents.js), a floor plugin whose noop_task tool " +
	"answers at once (the launch floor), a plugin whose floor_task tool runs a child and whose event hook posts " +
	"the child's answer to the parent the moment its last message completes, one request per child (the notice " +
	"floor), and native background subagents (OPENCODE_EXPERIMENTAL_BACKGROUND_SUBAGENTS=true); in a git " +
	"project (cases), then in a folder that is no git repository (cases_no_git), each its own server. " +
	"A warm-up fan-out of 3 per system is discarded; then each round runs every case for every system, " +
	"case by case, the system order reversed every other round. Per run: p50 over tasks of launch " +
	"(tool part state.time.end - start) and notice (child's last assistant time.completed -> parent's " +
	"notice message time.created), parent model turns after the launch turn. Per case and system: the " +
	"median over rounds of each round's p50."

func ratio(a, b float64) *float64 {
	if b == 0 {
		return nil
	}
	r := a / b
	return &r
}

// summarize folds the runs of every round into one summary per case, with its targets.
func summarize(cs []fanCase, runs []*run) []*caseSummary {
	var out []*caseSummary
	for _, c := range cs {
		s := &caseSummary{Case: c.Key, Name: c.Name, N: len(c.Delays), Systems: map[string]*sysSummary{}}
		for _, d := range c.Delays {
			s.Delays = append(s.Delays, d.Milliseconds())
		}
		for _, sys := range systems {
			ss := &sysSummary{}
			for _, r := range runs {
				if r.Case != c.Key || r.System != sys.name {
					continue
				}
				ss.LaunchRounds = append(ss.LaunchRounds, r.LaunchP50)
				if r.NoticeP50 != nil {
					ss.NoticeRounds = append(ss.NoticeRounds, *r.NoticeP50)
				}
				if r.ParentTurns != nil {
					ss.TurnsRounds = append(ss.TurnsRounds, *r.ParentTurns)
				}
			}
			ss.Launch = median(ss.LaunchRounds)
			if len(ss.NoticeRounds) > 0 {
				m := median(ss.NoticeRounds)
				ss.Notice = &m
			}
			if len(ss.TurnsRounds) > 0 {
				ts := make([]float64, len(ss.TurnsRounds))
				for i, t := range ss.TurnsRounds {
					ts[i] = float64(t)
				}
				m := median(ts)
				ss.Turns = &m
			}
			s.Systems[sys.name] = ss
		}
		o, nat, fl, nf := s.Systems[ours.name], s.Systems[native.name], s.Systems[floor.name], s.Systems[noticeFloor.name]
		s.LaunchOursNative = ratio(o.Launch, nat.Launch)
		s.LaunchOursFloor = ratio(o.Launch, fl.Launch)
		if o.Notice != nil && nat.Notice != nil {
			s.NoticeOursNative = ratio(*o.Notice, *nat.Notice)
		}
		if o.Notice != nil && nf.Notice != nil {
			s.NoticeOursFloor = ratio(*o.Notice, *nf.Notice)
		}
		s.Targets = targets(s, runs)
		s.Profile = profileStats(c.Key, runs)
		out = append(out, s)
	}
	return out
}

// targets checks one case: launch p50 ours <= native within max(25 %, 5 ms); notice p50 ours <=
// native + 10 ms, and at or below the notice floor's; ours one parent turn per batch in every
// round; and with 25 tasks, all 25 noticed with 25 distinct task IDs in every round.
func targets(s *caseSummary, runs []*run) []target {
	o, nat, nf := s.Systems[ours.name], s.Systems[native.name], s.Systems[noticeFloor.name]
	var out []target
	allow := math.Max(0.25*nat.Launch, 5)
	out = append(out, target{"launch p50 ours <= native within max(25 %, 5 ms)", o.Launch <= nat.Launch+allow,
		fmt.Sprintf("%.1f ms vs %.1f + %.1f = %.1f ms", o.Launch, nat.Launch, allow, nat.Launch+allow)})
	if o.Notice != nil && nat.Notice != nil {
		out = append(out, target{"notice p50 ours <= native + 10 ms", *o.Notice <= *nat.Notice+10,
			fmt.Sprintf("%.1f ms vs %.1f + 10 = %.1f ms", *o.Notice, *nat.Notice, *nat.Notice+10)})
	}
	if nf != nil && o.Notice != nil && nf.Notice != nil {
		out = append(out, target{"notice p50 ours <= the notice floor's", *o.Notice <= *nf.Notice,
			fmt.Sprintf("%.1f ms vs %.1f ms", *o.Notice, *nf.Notice)})
	}
	one := len(o.TurnsRounds) > 0
	for _, t := range o.TurnsRounds {
		one = one && t == 1
	}
	out = append(out, target{"ours: 1 parent turn per batch", one, fmt.Sprintf("per round %v", o.TurnsRounds)})
	if s.N == 25 {
		holds, notes := true, []string{}
		for _, r := range runs {
			if r.Case != s.Case || r.System != ours.name {
				continue
			}
			ok := r.Noticed == s.N && r.DistinctIDs == s.N && r.NoticeIDs == s.N
			holds = holds && ok
			notes = append(notes, fmt.Sprintf("round %d: %d noticed, %d distinct launch IDs, %d distinct notice IDs", r.Round, r.Noticed, r.DistinctIDs, r.NoticeIDs))
		}
		out = append(out, target{"n=25: all 25 noticed with 25 distinct task IDs", holds && len(notes) > 0, strings.Join(notes, "; ")})
	}
	return out
}

// profileStats is the hop profile of ours in one case: per segment, the p50 over all tasks of all
// rounds.
func profileStats(caseKey string, runs []*run) []hopStat {
	all := map[string][]float64{}
	for _, r := range runs {
		if r.Case != caseKey || r.System != ours.name {
			continue
		}
		for k, v := range hopDeltas(r.Tasks) {
			all[k] = append(all[k], v...)
		}
	}
	if len(all) == 0 {
		return nil
	}
	var out []hopStat
	for _, s := range segments {
		d := all[s.String()]
		out = append(out, hopStat{Group: s.Group, Segment: s.String(), P50: median(d), N: len(d)})
	}
	return out
}

func fmtMs(v float64) string { return fmt.Sprintf("%.0f", v) }

func fmtPtr(v *float64, f string) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf(f, *v)
}

// printReport writes the Markdown tables for BENCHMARKS.md, the rounds, the targets and the hop
// profile: the git project's cases, then those of the folder that is no git repository.
func printReport(w io.Writer, rep *report) {
	fmt.Fprintf(w, "\nfan-out: opencode %s, %d CPUs, %d rounds (median over rounds of each round's p50)", rep.OpenCodeVersion, rep.CPUs, rep.Rounds)
	if rep.Load != nil {
		fmt.Fprintf(w, "; load average %v at the start, %v at the end", rep.Load, rep.LoadAfter)
	}
	fmt.Fprintln(w)
	if len(rep.Cases) > 0 {
		printCases(w, "in a git project", rep.Cases, rep.ProfileNote)
	}
	if len(rep.CasesNoGit) > 0 {
		printCases(w, "in a folder that is no git repository", rep.CasesNoGit, "")
	}
}

// printCases writes one project's tables.
func printCases(w io.Writer, where string, cs []*caseSummary, profileNote string) {
	fmt.Fprintf(w, "\n%s:\n\n", where)
	fmt.Fprintln(w, "| case | launch p50 ours / native / floor (ms) | launch ratio ours/native | notice p50 ours / native / notice floor (ms) | notice ratio ours/native | notice ratio ours/floor | parent turns ours / native |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- |")
	for _, c := range cs {
		o, nat, fl, nf := c.Systems[ours.name], c.Systems[native.name], c.Systems[floor.name], c.Systems[noticeFloor.name]
		fmt.Fprintf(w, "| %s | %s / %s / %s | %s | %s / %s / %s | %s | %s | %s / %s |\n", c.Name,
			fmtMs(o.Launch), fmtMs(nat.Launch), fmtMs(fl.Launch), fmtPtr(c.LaunchOursNative, "%.2f"),
			fmtPtr(o.Notice, "%.0f"), fmtPtr(nat.Notice, "%.0f"), fmtPtr(nf.Notice, "%.0f"),
			fmtPtr(c.NoticeOursNative, "%.2f"), fmtPtr(c.NoticeOursFloor, "%.2f"),
			fmtPtr(o.Turns, "%g"), fmtPtr(nat.Turns, "%g"))
	}
	fmt.Fprintln(w)
	for _, c := range cs {
		fmt.Fprintf(w, "launch ratio ours/floor, %s: %s\n", c.Name, fmtPtr(c.LaunchOursFloor, "%.2f"))
	}
	fmt.Fprintln(w, "\nper round p50s (ms):")
	for _, c := range cs {
		o, nat, fl, nf := c.Systems[ours.name], c.Systems[native.name], c.Systems[floor.name], c.Systems[noticeFloor.name]
		fmt.Fprintf(w, "- %s: launch ours %v, native %v, floor %v, notice floor %v; notice ours %v, native %v, notice floor %v; parent turns ours %v, native %v\n",
			c.Name, rounded(o.LaunchRounds), rounded(nat.LaunchRounds), rounded(fl.LaunchRounds), rounded(nf.LaunchRounds),
			rounded(o.NoticeRounds), rounded(nat.NoticeRounds), rounded(nf.NoticeRounds), o.TurnsRounds, nat.TurnsRounds)
	}
	fmt.Fprintln(w, "\ntargets:")
	for _, c := range cs {
		for _, t := range c.Targets {
			verdict := "holds"
			if !t.Holds {
				verdict = "MISSED"
			}
			fmt.Fprintf(w, "- %s: %s: %s (%s)\n", c.Name, t.Name, verdict, t.Detail)
		}
	}
	fmt.Fprintln(w, "\nhop profile of asyncagents (ASYNCAGENTS_PROFILE), p50 over all tasks of all rounds, ms (tasks):")
	if profileNote != "" {
		fmt.Fprintln(w, profileNote)
		return
	}
	fmt.Fprint(w, "| hop |")
	for _, c := range cs {
		fmt.Fprintf(w, " %s |", c.Name)
	}
	fmt.Fprint(w, "\n| --- |")
	for range cs {
		fmt.Fprint(w, " --- |")
	}
	fmt.Fprintln(w)
	for i, s := range segments {
		fmt.Fprintf(w, "| %s: %s |", s.Group, s)
		for _, c := range cs {
			if i < len(c.Profile) && c.Profile[i].N > 0 {
				fmt.Fprintf(w, " %.1f (%d) |", c.Profile[i].P50, c.Profile[i].N)
			} else {
				fmt.Fprint(w, " – |")
			}
		}
		fmt.Fprintln(w)
	}
}

func machine() (int, string) { return runtime.NumCPU(), runtime.GOOS + "/" + runtime.GOARCH }

func rounded(xs []float64) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(math.Round(x))
	}
	return out
}

// projectTUI marks the runs of BenchmarkTUI (a git project, in the TUI without --port).
const projectTUI = "tui"

const tuiMethod = "OpenCode's TUI without --port (its server listens nowhere; the plugin's client is in-process), in tmux, " +
	"on a git project, with the same four plugins and systems as the fan-out; each fan-out is typed into a new " +
	"session (/new), and every figure is read from OpenCode's database (message and part rows, the same " +
	"timestamps as the API's). Systems interleaved and summarized as in the fan-out."

// tuiReport is BenchmarkTUI's part of dist/bench.json.
type tuiReport struct {
	Date   string         `json:"date"`
	Rounds int            `json:"rounds"`
	Load   []float64      `json:"load_average,omitempty"` // at the end
	Method string         `json:"method"`
	Cases  []*caseSummary `json:"cases"`
	Warmup []*run         `json:"warmup"`
	Runs   []*run         `json:"runs"`
}

// addTUIReport puts t into the report file at path as its "tui" field, keeping every other field
// as it is (a file that does not exist yet gets only that field).
func addTUIReport(path string, t *tuiReport) error { return addReportField(path, "tui", t) }

// addReportField puts v into the report file at path as its field name, keeping every other
// field as it is (a file that does not exist yet gets only that field).
func addReportField(path, name string, v any) error {
	fields := map[string]json.RawMessage{}
	raw, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := json.Unmarshal(raw, &fields); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	case !os.IsNotExist(err):
		return err
	}
	if fields[name], err = json.Marshal(v); err != nil {
		return err
	}
	out, err := json.MarshalIndent(fields, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(out, '\n'), 0o644)
}
