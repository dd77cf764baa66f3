package core

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/asyncagents/asyncagents/core/task"
)

// One history per process, merged on read. Two OpenCode processes may serve one project: each
// writes a log of its own, history-<key>.<owner>.log (owner: its pid and start time, as the
// server files name a process), with its index beside it, and no other process ever writes it.
// So appends never interleave, and a compaction rewrites only its writer's tasks. A process owns
// the tasks of its log: only it reconciles, polls, fails or cancels them. It follows the other
// logs read-only (FollowSource), so its status API lists every task of the project.
//
// A log whose writer is gone (a crash, a restart; and history-<key>.log, written before logs
// had owners) is adopted by the next process to start on the project: its writer's tasks are
// then this one's, reconciled as after any restart. HistoryPlanFor says how, from the names in the
// storage directory and whether their writers run; the host renames what the plan says (a rename
// is atomic: when two processes start at once, one alone takes each log) and restores.

// Effect kinds for the per-process logs.
const (
	// EffectHistoryRemove: remove File, a log of the storage directory adopted and folded into
	// this process's own by the rewrite before it. `id` is 0.
	EffectHistoryRemove = "history.remove"
)

// ProcInfo is what a host found out about a pid a plan asked for (HistoryPlan.Check).
type ProcInfo struct {
	PID     int    `json:"pid"`
	Running bool   `json:"running"`
	Start   string `json:"start,omitempty"` // its start time as the OS tells it ("" unknown)
	// Stat is its /proc/<pid>/stat line, which gives Start when the host sends no Start.
	Stat string `json:"stat,omitempty"`
}

// HistoryPlan answers the histories op: what a host does with the project's logs.
type HistoryPlan struct {
	// Check lists the pids whose logs' fate depends on whether they run: the host asks again
	// with procs for them. The rest of the plan is empty meanwhile.
	Check []int `json:"check,omitempty"`
	// Adopt lists the logs of writers that are gone, for this process to take (only at start,
	// before the restore).
	Adopt []HistoryAdopt `json:"adopt,omitempty"`
	// Follow lists the logs other live processes write (base names), to follow read-only.
	Follow []string `json:"follow,omitempty"`
	// Indexes names the index beside each followed log that has one: a first read of the log
	// sends it too (follow with index), so 10,000 tasks load from it, not line by line.
	Indexes map[string]string `json:"indexes,omitempty"`
}

// HistoryAdopt is one log to take: rename From to To; only if that succeeded, rename IndexFrom to
// IndexTo (or remove IndexFrom when IndexTo is ""). Merge: To is not the process's own log but is
// read after it at the restore (restore.merged), then folded into it and removed.
type HistoryAdopt struct {
	From      string `json:"from"`
	To        string `json:"to"`
	IndexFrom string `json:"indexFrom,omitempty"`
	IndexTo   string `json:"indexTo,omitempty"`
	Merge     bool   `json:"merge,omitempty"`
}

// historyOwner names a process in its log's name: its pid and, where known, its start time.
func historyOwner(pid int, procStart string) string {
	if pid <= 0 {
		return ""
	}
	if procStart == "" {
		return strconv.Itoa(pid)
	}
	return strconv.Itoa(pid) + "-" + procStart
}

// historyName is the base name of a log (ext "log") or its index ("idx"): the shared log of
// before when owner is "", a process's own log, or (n > 0) a log it adopted to fold into its own.
func historyName(key, owner string, n int, ext string) string {
	name := "history-" + key
	if owner != "" {
		name += "." + owner
	}
	if n > 0 {
		name += "." + strconv.Itoa(n)
	}
	return name + "." + ext
}

// parsedHistory is a log's name read back.
type parsedHistory struct {
	owner string // "" for the shared log of before
	pid   int
	start string
	n     int
}

// parseHistoryName reads a log's base name for the project key; ok is false for any other file
// (other projects, indexes, temporary files).
func parseHistoryName(key, name string) (p parsedHistory, ok bool) {
	rest, found := strings.CutPrefix(name, "history-"+key)
	if !found {
		return p, false
	}
	rest, found = strings.CutSuffix(rest, ".log")
	if !found {
		return p, false
	}
	if rest == "" {
		return p, true
	}
	parts := strings.Split(strings.TrimPrefix(rest, "."), ".")
	if !strings.HasPrefix(rest, ".") || len(parts) > 2 {
		return p, false
	}
	if len(parts) == 2 {
		n, err := strconv.Atoi(parts[1])
		if err != nil || n <= 0 {
			return p, false
		}
		p.n = n
	}
	p.owner = parts[0]
	pidText, start, _ := strings.Cut(p.owner, "-")
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 || strings.Contains(start, "-") {
		return p, false
	}
	p.pid, p.start = pid, start
	return p, true
}

// HistoryPlanFor plans what the process named own (historyOwner; "" for a reader such as
// `asyncagents serve`, which adopts nothing and follows every log) does with the logs among
// files, the base names in the storage directory. procs says which writers run; without an
// answer for a pid the plan asks for it (Check). adopt is false after the start: a running
// process follows logs and takes none.
func HistoryPlanFor(key, own string, files []string, procs []ProcInfo, adopt bool) HistoryPlan {
	listed := map[string]bool{}
	for _, f := range files {
		listed[f] = true
	}
	known := map[int]ProcInfo{}
	for _, p := range procs {
		if p.Start == "" {
			p.Start = ProcStatStart(p.Stat)
		}
		known[p.PID] = p
	}
	ownPID, _ := strconv.Atoi(strings.SplitN(own, "-", 2)[0])
	var plan HistoryPlan
	var dead []string
	var checks []int
	sorted := slices.Clone(files)
	sort.Strings(sorted)
	for _, name := range sorted {
		p, ok := parseHistoryName(key, name)
		if !ok {
			continue
		}
		switch {
		case own != "" && p.owner == own:
			if p.n > 0 && adopt {
				// Adopted by this process before, not yet folded in (a trap came between).
				plan.Adopt = append(plan.Adopt, HistoryAdopt{From: name, To: name, Merge: true})
			}
		case own == "" || !adopt:
			plan.Follow = append(plan.Follow, name)
		case p.owner == "" || p.pid == ownPID:
			// The log of before, or of an earlier process that had this pid: none runs now.
			dead = append(dead, name)
		default:
			info, asked := known[p.pid]
			switch {
			case !asked:
				checks = append(checks, p.pid)
			case info.Running && (p.start == "" || info.Start == "" || p.start == info.Start):
				plan.Follow = append(plan.Follow, name)
			default:
				dead = append(dead, name)
			}
		}
	}
	if len(checks) > 0 {
		slices.Sort(checks)
		return HistoryPlan{Check: slices.Compact(checks)}
	}
	for _, name := range plan.Follow {
		if idx := strings.TrimSuffix(name, ".log") + ".idx"; listed[idx] {
			if plan.Indexes == nil {
				plan.Indexes = map[string]string{}
			}
			plan.Indexes[name] = idx
		}
	}
	ownLog := historyName(key, own, 0, "log")
	next := 1
	for _, a := range plan.Adopt {
		if p, _ := parseHistoryName(key, a.From); p.n >= next {
			next = p.n + 1
		}
	}
	for _, name := range dead {
		a := HistoryAdopt{From: name}
		if idx := strings.TrimSuffix(name, ".log") + ".idx"; listed[idx] {
			a.IndexFrom = idx
		}
		if !listed[ownLog] {
			// The first log taken becomes this process's own, index and all: a restart costs no
			// rewrite.
			a.To = ownLog
			if a.IndexFrom != "" {
				a.IndexTo = historyName(key, own, 0, "idx")
			}
			listed[ownLog] = true
		} else {
			a.To, a.Merge = historyName(key, own, next, "log"), true
			next++
		}
		plan.Adopt = append(plan.Adopt, a)
	}
	return plan
}

// FollowSource is Follow for the log of another process, named source: its tasks are kept apart
// from this machine's own (the status API lists both), and nothing here acts on them. With
// replace and no lines the log is gone (adopted by a process that will write its tasks in its own
// log), and its tasks are dropped. Source "" is Follow itself (a reader's only log).
func (m *Machine) FollowSource(now int64, source, lines, index string, replace bool) (RestoreResult, []Effect) {
	if source == "" {
		return m.Follow(now, lines, replace)
	}
	m.changes++
	if now > m.now {
		m.now = now
	}
	o := m.others[source]
	if o == nil {
		if lines == "" {
			return RestoreResult{}, nil
		}
		// Read-only whatever this machine is: another process's tasks are never started,
		// reconciled or written here.
		cfg := m.cfg
		cfg.API.ReadOnly = true
		o = NewMachine(cfg)
		o.probing = true // the workers' health is the view's to ask (workers_probe.go), never a log's
		if m.others == nil {
			m.others = map[string]*Machine{}
		}
		m.others[source] = o
		if index != "" && replace {
			// A first read of a log with an index: the tasks load from it as a restart's do
			// (their records read only as far as their start until asked for). What the
			// restore would write or ask for is the writer's business, and is dropped.
			res, _ := o.RestoreIndexed(now, lines, index)
			m.storeChanged()
			return res, nil
		}
	}
	res, out := o.Follow(now, lines, replace)
	if len(o.tasks) == 0 && replace {
		delete(m.others, source)
	}
	m.storeChanged()
	return res, out
}

// FollowedSources lists the other processes' logs this machine holds tasks of.
func (m *Machine) FollowedSources() []string {
	out := make([]string, 0, len(m.others))
	for s := range m.others {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// foreign is the task of another process's log with this ID (either ID), if any.
func (m *Machine) foreign(id string) *run {
	for _, s := range m.FollowedSources() {
		if t := m.others[s].task(id); t != nil {
			return t
		}
	}
	return nil
}

// mergedTasks is the status API's list: this machine's tasks and the other logs', in start order
// (this machine's first on a tie); a task both name is this machine's.
func (m *Machine) mergedTasks(own []*task.Task) []*task.Task {
	if len(m.others) == 0 {
		return own
	}
	seen := make(map[string]bool, len(own))
	all := slices.Clone(own)
	for _, t := range own {
		seen[t.ID] = true
	}
	for _, s := range m.FollowedSources() {
		for _, t := range m.others[s].apiTasks() {
			if !seen[t.ID] {
				seen[t.ID] = true
				all = append(all, t)
			}
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].StartedAt < all[j].StartedAt })
	return all
}

// foldMerged makes a restore that read adopted logs after the own one (merged) write their tasks
// into the own log, then remove them: the compaction, unless the restore planned one, then a
// remove each.
func (m *Machine) foldMerged(merged []string) {
	if len(merged) == 0 {
		return
	}
	rewritten := false
	for _, e := range m.out {
		rewritten = rewritten || e.Kind == EffectHistoryRewrite
	}
	if !rewritten {
		m.compact()
	}
	for _, name := range merged {
		m.out = append(m.out, Effect{Kind: EffectHistoryRemove, File: name})
	}
}

// MergeAtRestore names the adopted logs the next restore reads after the own log (HistoryAdopt.Merge).
func (m *Machine) MergeAtRestore(names []string) { m.merged = names }
