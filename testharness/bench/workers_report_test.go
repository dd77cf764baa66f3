package bench

import (
	"fmt"
	"time"
)

// workersSample is one fan-out: the parent's and the workers' CPU seconds, the notice p50, the
// parent's turns, the wall time.
type workersSample struct {
	cpu, workersCPU, noticeMs float64
	turns                     int
	wallMs                    float64
}

// workersReport is what BenchmarkWorkers writes: medians over rounds, and every round's figures.
type workersReport struct {
	Date           string  `json:"date"`
	Rounds         int     `json:"rounds"`
	Children       int     `json:"children"`
	Steps          int     `json:"child_steps"`    // each child's steps before its answer
	ThinkMs        int64   `json:"child_think_ms"` // its model's wait before each step
	CPULocalS      float64 `json:"cpu_local_s"`
	CPURemoteS     float64 `json:"cpu_remote_s"`
	CPURatio       float64 `json:"cpu_remote_over_local"`
	CPUWorkersS    float64 `json:"cpu_workers_s"`  // both workers, in the remote runs
	RestCPUPerS    float64 `json:"rest_cpu_per_s"` // the parent at rest, before the rounds
	WallLocalS     float64 `json:"wall_local_s"`
	WallRemoteS    float64 `json:"wall_remote_s"`
	NoticeLocalMs  float64 `json:"notice_local_p50_ms"`
	NoticeRemoteMs float64 `json:"notice_remote_p50_ms"`
	// The remote floor (workers_floor.go): OpenCode's own share of a fan-out on the workers.
	CPUFloorS     float64 `json:"cpu_floor_s"`
	FloorRatio    float64 `json:"cpu_floor_over_local"`
	OursOverFloor float64 `json:"cpu_remote_over_floor"`
	// Ours with the workers polled (workers_polled_test.go).
	CPUPolledS     float64 `json:"cpu_polled_s"`
	PolledRatio    float64 `json:"cpu_polled_over_local"`
	NoticePolledMs float64 `json:"notice_polled_p50_ms"`
	// The streams floor (ASYNCAGENTS_BENCH_STREAM_FLOOR=1): the remote floor and the streams read.
	CPUStreamsS     float64              `json:"cpu_streams_floor_s,omitempty"`
	StreamsRatio    float64              `json:"cpu_streams_floor_over_local,omitempty"`
	OursOverStreams float64              `json:"cpu_remote_over_streams_floor,omitempty"`
	Runs            map[string][]float64 `json:"runs_cpu_s"`
	Turns           map[string][]int     `json:"runs_parent_turns"`
	Load            []float64            `json:"load"`
}

func summarizeWorkers(s map[string][]workersSample) *workersReport {
	rep := &workersReport{Date: time.Now().Format(time.RFC3339), Rounds: workersRounds, Children: len(workersCase.Delays), Steps: workerSteps,
		ThinkMs: workerThink.Milliseconds(), Runs: map[string][]float64{}, Turns: map[string][]int{}, Load: loadAverage()}
	med := func(where string, f func(workersSample) float64) float64 {
		var xs []float64
		for _, x := range s[where] {
			xs = append(xs, f(x))
		}
		return median(xs)
	}
	for _, where := range []string{"local", "remote", "polled", "floor", "streams"} {
		for _, x := range s[where] {
			rep.Runs[where] = append(rep.Runs[where], x.cpu)
			rep.Turns[where] = append(rep.Turns[where], x.turns)
		}
	}
	rep.CPULocalS = med("local", func(x workersSample) float64 { return x.cpu })
	rep.CPURemoteS = med("remote", func(x workersSample) float64 { return x.cpu })
	rep.CPUWorkersS = med("remote", func(x workersSample) float64 { return x.workersCPU })
	rep.CPUFloorS = med("floor", func(x workersSample) float64 { return x.cpu })
	rep.CPUPolledS = med("polled", func(x workersSample) float64 { return x.cpu })
	rep.NoticePolledMs = med("polled", func(x workersSample) float64 { return x.noticeMs })
	if rep.CPULocalS > 0 {
		rep.CPURatio = rep.CPURemoteS / rep.CPULocalS
		rep.PolledRatio = rep.CPUPolledS / rep.CPULocalS
		rep.FloorRatio = rep.CPUFloorS / rep.CPULocalS
	}
	if rep.CPUFloorS > 0 {
		rep.OursOverFloor = rep.CPURemoteS / rep.CPUFloorS
	}
	if len(s["streams"]) > 0 && rep.CPULocalS > 0 {
		rep.CPUStreamsS = med("streams", func(x workersSample) float64 { return x.cpu })
		rep.StreamsRatio = rep.CPUStreamsS / rep.CPULocalS
		rep.OursOverStreams = rep.CPURemoteS / rep.CPUStreamsS
	}
	rep.WallLocalS = med("local", func(x workersSample) float64 { return x.wallMs / 1000 })
	rep.WallRemoteS = med("remote", func(x workersSample) float64 { return x.wallMs / 1000 })
	rep.NoticeLocalMs = med("local", func(x workersSample) float64 { return x.noticeMs })
	rep.NoticeRemoteMs = med("remote", func(x workersSample) float64 { return x.noticeMs })
	return rep
}

func printWorkers(r *workersReport) {
	fmt.Printf("\n%d children of %d steps (%d ms before each) per fan-out, %d rounds after a warm-up, medians over rounds (load %v)\n\n", r.Children, r.Steps, r.ThinkMs, r.Rounds, r.Load)
	fmt.Println("| placed | parent OpenCode CPU | workers' CPU | notice p50 | parent turns |")
	fmt.Println("|---|---|---|---|---|")
	fmt.Printf("| local | %.2f s | - | %.0f ms | %v |\n", r.CPULocalS, r.NoticeLocalMs, r.Turns["local"])
	fmt.Printf("| 2 workers | %.2f s | %.2f s | %.0f ms | %v |\n", r.CPURemoteS, r.CPUWorkersS, r.NoticeRemoteMs, r.Turns["remote"])
	fmt.Printf("| 2 workers, polled every %d ms | %.2f s | - | %.0f ms | %v |\n", polledEveryMs, r.CPUPolledS, r.NoticePolledMs, r.Turns["polled"])
	fmt.Printf("| remote floor | %.2f s | - | - | %v |\n", r.CPUFloorS, r.Turns["floor"])
	if r.CPUStreamsS > 0 {
		fmt.Printf("| streams floor | %.2f s | - | - | %v |\n", r.CPUStreamsS, r.Turns["streams"])
	}
	fmt.Printf("\nCPU remote/local: %.3f (target at most 0.1); per round local %v, remote %v\n", r.CPURatio, r.Runs["local"], r.Runs["remote"])
	fmt.Printf("CPU polled/local: %.3f; per round polled %v\n", r.PolledRatio, r.Runs["polled"])
	fmt.Printf("CPU floor/local: %.3f, remote/floor: %.2f; per round floor %v\n", r.FloorRatio, r.OursOverFloor, r.Runs["floor"])
	if r.CPUStreamsS > 0 {
		fmt.Printf("CPU streams floor/local: %.3f, remote/streams floor: %.2f; per round streams floor %v\n", r.StreamsRatio, r.OursOverStreams, r.Runs["streams"])
	}
	fmt.Printf("wall local %.1f s, remote %.1f s; the parent at rest: %.3f CPU s per s (%.2f s over the remote wall)\n",
		r.WallLocalS, r.WallRemoteS, r.RestCPUPerS, r.RestCPUPerS*r.WallRemoteS)
}
