package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
	"github.com/asyncagents/asyncagents/testharness/ocserve"
)

// workersCase is the fan-out BenchmarkWorkers runs: 20 children, each working through
// workerSteps steps before its short answer, which comes after the case's delay.
var workersCase = fanCase{"n20-workers", "20 tasks, local or on 2 workers", same(20, 500*time.Millisecond)}

// A child's work is what placing it elsewhere moves off the parent's machine: each step streams
// a stretch of reasoning and runs a tool (a glob, a read, a shell command, in turn), as a child
// that surveys a repository would; its answer is short, since the parent gets it in a notice.
// Each child works through 6 steps; ASYNCAGENTS_BENCH_WORKER_STEPS sizes the children otherwise,
// and ASYNCAGENTS_BENCH_WORKER_THINK_MS has its model wait before each step (workerThink).
// The parent's cost of a task placed elsewhere is mostly fixed (its launch, its notice), while a
// local child costs it every step: the ratio falls as the children grow (BENCHMARKS.md).
var workerSteps = func() int {
	if n, err := strconv.Atoi(os.Getenv("ASYNCAGENTS_BENCH_WORKER_STEPS")); err == nil && n > 0 {
		return n
	}
	return 6
}()

// workerThink is the wait before each step's first byte, as a model's time to its first token:
// none by default (the mock answers at once, the hard case for the ratio: a local child then costs
// the parent only what it streams), ASYNCAGENTS_BENCH_WORKER_THINK_MS otherwise (BENCHMARKS.md).
var workerThink = func() time.Duration {
	if n, err := strconv.Atoi(os.Getenv("ASYNCAGENTS_BENCH_WORKER_THINK_MS")); err == nil && n > 0 {
		return time.Duration(n) * time.Millisecond
	}
	return 0
}()

var (
	workerFindings = strings.Repeat("The child's findings, streamed token by token as a model would. ", 40)
	workerTools    = []mockmodel.ToolCall{
		{Name: "glob", Args: map[string]any{"pattern": "*.json"}},
		{Name: "read", Args: map[string]any{"filePath": "opencode.json"}},
		{Name: "bash", Args: map[string]any{"command": "git status --short; ls", "description": "look around"}},
	}
)

// workersScript: a run labelled "remote..." places its children on w1 and w2 in turn, any other
// run places them locally; a child works through its steps, then answers.
func workersScript(req mockmodel.Request) mockmodel.Reply {
	first := firstUser(req)
	if strings.HasPrefix(first, childPrefix) {
		var i, ms int
		fmt.Sscanf(first, childPrefix+"%d %d", &i, &ms)
		step := 0
		for _, m := range req.Messages {
			if m.Role == "tool" {
				step++
			}
		}
		if step < workerSteps {
			return mockmodel.Reply{Text: workerFindings, ToolCalls: []mockmodel.ToolCall{workerTools[step%len(workerTools)]}, Delay: workerThink}
		}
		return mockmodel.Reply{Text: fmt.Sprintf("result %d", i), Delay: time.Duration(ms) * time.Millisecond}
	}
	if req.Messages[len(req.Messages)-1].Role == "tool" {
		return mockmodel.Reply{Text: "waiting"}
	}
	if strings.HasPrefix(req.LastUser, fanoutPrefix) {
		remote := strings.Contains(req.LastUser, " run=remote") || strings.Contains(req.LastUser, " run=polled")
		floorRun := strings.Contains(req.LastUser, " run=floor") || strings.Contains(req.LastUser, " run=streams") // both floors
		var calls []mockmodel.ToolCall
		for _, f := range strings.Fields(req.LastUser) {
			delays, ok := strings.CutPrefix(f, "delays=")
			if !ok {
				continue
			}
			for i, d := range strings.Split(delays, ",") {
				sys := ours
				if floorRun {
					sys = remoteFloor
				}
				args := sys.args(fmt.Sprintf("Task %d", i), fmt.Sprintf("%s%d %s", childPrefix, i, d))
				args["worker"] = "local"
				if remote || floorRun {
					args["worker"] = []string{"w1", "w2"}[i%2]
				}
				calls = append(calls, mockmodel.ToolCall{Name: sys.tool, Args: args})
			}
		}
		return mockmodel.Reply{ToolCalls: calls}
	}
	return mockmodel.Reply{Text: "noted"}
}

// fleetServed is the fleet as fanOut sees it: the parent's API, its plugin's status API, and a
// child session's messages from whichever server holds it (the parent, or the worker the child
// ran on).
type fleetServed struct {
	served
	statusAPI
	workers []*ocserve.Server
}

// pace is how often fanOut asks the plugin's status API whether every task has ended and been
// told (allTold); it reads the parent's whole conversation only once they have. That read is work
// for OpenCode's main thread, which this benchmark measures: polled for as long as the children
// run, it was a large part of a remote fan-out's figure, the instrument's cost and not the
// product's (BENCHMARKS.md). The status API answers from the plugin's core in its Worker, at the
// same cost for local and remote children. The figures do not depend on the pace: notices are
// timed by OpenCode's timestamps.
func (s fleetServed) pace() time.Duration { return time.Second }

func (s fleetServed) messages(ctx context.Context, session string) ([]ocserve.Message, error) {
	msgs, err := s.oc.Messages(ctx, session)
	for _, w := range s.workers {
		if err == nil {
			break
		}
		msgs, err = w.Messages(ctx, session)
	}
	return msgs, err
}

// restWindow is how long BenchmarkWorkers measures the parent at rest.
const restWindow = 10 * time.Second

// workersRounds is how many rounds BenchmarkWorkers runs after its warm-up (a round takes two
// minutes on two loaded cores); ASYNCAGENTS_BENCH_ROUNDS overrides it, as for the fan-out.
var workersRounds = func() int {
	if n, err := strconv.Atoi(os.Getenv("ASYNCAGENTS_BENCH_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 3
}()

// BenchmarkWorkers measures what placing children on workers saves the parent's OpenCode: its
// CPU seconds (the process and its descendants, /proc) for 20 children placed locally against 20
// placed on two workers (10 each), as a ratio (the target: remote at most a tenth of local); and,
// in the same runs, the delay from a child's completion to its notice in the parent, remote
// against local. Beside them runs the remote floor (workers_floor.go), in a parent of its own on
// the same workers: what OpenCode itself spends on such a fan-out (the launching turn, a notice
// message per child, the turn the last one wakes) with nothing in the parent following the
// children. Ours also runs polled (workers_polled_test.go): a parent of its own whose config
// polls the same workers (pollMs) instead of following their streams. With
// ASYNCAGENTS_BENCH_STREAM_FLOOR=1 one more system runs, the streams floor:
// the remote floor with a Worker in its parent that follows the workers' streams as ours does and
// does nothing with them (workers_floor.go). After a discarded warm-up round, each round runs
// them all, in an order that turns by one every round. It adds a "workers" field to
// dist/bench.json (for children of other sizes, "workers_<n>_steps") and prints a table.
func BenchmarkWorkers(b *testing.B) {
	root := ocserve.RepoRoot(b)
	for i := 0; i < b.N; i++ {
		model := mockmodel.Start(b, workersScript)
		port := freePort(b)
		fl := ocserve.StartFleet(b, ocserve.FleetOptions{
			Parent: ocserve.Options{ModelURL: model.URL(), LogLevel: "WARN", Plugins: []string{ocserve.PluginSpec(b)},
				Env: []string{"ASYNCAGENTS_API_PORT=" + strconv.Itoa(port), "ASYNCAGENTS_API_AUTH=none"}},
			Workers: 2, Config: map[string]any{"maxConcurrentStarts": 20}, Worker: map[string]any{"maxTasks": 10}})
		oc := fleetServed{served{fl.Parent}, statusAPI{fmt.Sprintf("http://127.0.0.1:%d", port)},
			[]*ocserve.Server{fl.Workers["w1"], fl.Workers["w2"]}}
		floor := startRemoteFloor(b, root, model, fl, false)
		polled := startPolledParent(b, model, fl)
		systems := []string{"local", "remote", "polled", "floor"}
		var streamFloor *remoteFloorParent
		if os.Getenv("ASYNCAGENTS_BENCH_STREAM_FLOOR") == "1" {
			streamFloor = startRemoteFloor(b, root, model, fl, true)
			systems = append(systems, "streams")
		}
		pid := fl.Parent.PID()
		// The parent's CPU at rest, before any fan-out: OpenCode's own baseline, which every
		// fan-out's figure holds for as long as it runs. This sleep is the measuring window.
		restFrom := treeCPU(pid)
		time.Sleep(restWindow)
		restPerS := (treeCPU(pid) - restFrom) / restWindow.Seconds()
		samples := map[string][]workersSample{}
		for round := 0; round <= workersRounds; round++ {
			order := slices.Concat(systems[round%len(systems):], systems[:round%len(systems)])
			for _, where := range order {
				// Bigger children take longer: the bound grows with them.
				ctx, cancel := context.WithTimeout(context.Background(), runTimeout*time.Duration(max(1, workerSteps/6)))
				label := fmt.Sprintf("%s-r%d", where, round)
				pid, parent := pid, fl.Parent
				floorOf := map[string]*remoteFloorParent{"floor": floor, "streams": streamFloor}[where]
				served := oc
				switch {
				case floorOf != nil:
					pid, parent = floorOf.parent.PID(), floorOf.parent
				case where == "polled":
					pid, parent, served = polled.oc.PID(), polled.oc, polled.fleetServed
				}
				before, workersBefore, threadsBefore := treeCPU(pid), workersCPU(fl), threadCPU(pid)
				var r *run
				var err error
				if floorOf != nil {
					r, err = floorOf.fanOut(ctx, oc, label)
				} else {
					r, err = fanOut(ctx, served, model, ours, workersCase, label)
				}
				if err != nil {
					b.Fatalf("%s round %d: %v", where, round, err)
				}
				// The children ran where they were placed: a local child's session is the parent's.
				for _, t := range r.Tasks {
					if _, err := parent.Session(ctx, t.Session); (err == nil) != (where == "local") {
						b.Fatalf("%s round %d: task %s's session %s is not where it was placed (%v)", where, round, t.TaskID, t.Session, err)
					}
				}
				cancel()
				ended := treeCPU(pid)
				settleToRest(pid)
				cpu, onWorkers := treeCPU(pid)-before, workersCPU(fl)-workersBefore
				fmt.Printf("%s round %d: parent %.2f s (%.2f s of it after the fan-out, until at rest), %d notice messages, wall %.1f s, by thread %v\n",
					where, round, cpu, treeCPU(pid)-ended, r.NoticeMsgs, r.WallMs/1000, threadDelta(threadsBefore, threadCPU(pid)))
				if r.Noticed != len(workersCase.Delays) || r.NoticeParts != r.Noticed {
					b.Fatalf("%s round %d: %d noticed, %d notice parts, of %d tasks", where, round, r.Noticed, r.NoticeParts, len(workersCase.Delays))
				}
				if round > 0 {
					samples[where] = append(samples[where], workersSample{cpu, onWorkers, *r.NoticeP50, *r.ParentTurns, r.WallMs})
				}
			}
		}
		rep := summarizeWorkers(samples)
		rep.RestCPUPerS = restPerS
		field := "workers" // the default children; other sizes are fields of their own
		if workerSteps != 6 || workerThink > 0 {
			field = fmt.Sprintf("workers_%d_steps", workerSteps)
		}
		if workerThink > 0 {
			field += fmt.Sprintf("_%d_ms_think", workerThink.Milliseconds())
		}
		b.ReportMetric(rep.CPURatio, "cpu-remote/local")
		b.ReportMetric(rep.NoticeRemoteMs, "notice-remote-ms")
		b.ReportMetric(rep.NoticeLocalMs, "notice-local-ms")
		b.ReportMetric(rep.FloorRatio, "cpu-floor/local")
		printWorkers(rep)
		if err := addReportField(filepath.Join(root, "dist", "bench.json"), field, rep); err != nil {
			b.Fatal(err)
		}
	}
}

// What a fan-out leaves behind in the parent (its garbage collected, its code compiled, its
// history written) is counted in its own figure: after each fan-out, the benchmark waits until
// the parent uses less than restLimit CPU seconds in a restProbe (at rest it uses about a third
// of that), for at most settleMax. Measured with a fixed pause instead, a remote fan-out that
// followed a local one was charged for the local one's collection.
const (
	restProbe = time.Second
	restLimit = 0.03
	settleMax = 20 * time.Second
)

// settleToRest waits, bounded by settleMax, until the parent is back at rest.
func settleToRest(pid int) {
	for deadline := time.Now().Add(settleMax); time.Now().Before(deadline); {
		from := treeCPU(pid)
		time.Sleep(restProbe)
		if treeCPU(pid)-from < restLimit {
			return
		}
	}
}

// workersCPU is treeCPU summed over the fleet's workers.
func workersCPU(fl *ocserve.Fleet) float64 {
	var s float64
	for _, w := range fl.Workers {
		s += treeCPU(w.PID())
	}
	return s
}

// clockTicks is the kernel's USER_HZ, the unit of /proc/<pid>/stat's times (100 on Linux).
const clockTicks = 100

// treeCPU is the CPU seconds of process pid and every live descendant of it (utime + stime),
// plus what their reaped children used (cutime + cstime).
func treeCPU(pid int) float64 {
	stats := map[int][]string{} // pid -> the fields after the command
	parent := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The command, in parentheses, may hold spaces: the fields start after its last ')'.
		s := string(raw)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 15 {
			continue
		}
		stats[p] = fields
		parent[p], _ = strconv.Atoi(fields[1])
	}
	inTree := func(p int) bool {
		for depth := 0; p > 1 && depth < 64; depth++ {
			if p == pid {
				return true
			}
			p = parent[p]
		}
		return false
	}
	var ticks int64
	for p, f := range stats {
		if !inTree(p) {
			continue
		}
		for _, i := range []int{11, 12, 13, 14} { // utime, stime, cutime, cstime
			n, _ := strconv.ParseInt(f[i], 10, 64)
			ticks += n
		}
	}
	return float64(ticks) / clockTicks
}
