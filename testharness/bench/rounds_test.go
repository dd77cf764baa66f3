package bench

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/asyncagents/asyncagents/testharness/mockmodel"
)

// rounds plays the fan-outs of BenchmarkFanOut and BenchmarkTUI on one OpenCode: a discarded
// warm-up of every system (the plugins load on the project's first request, and the first
// fan-out of each system runs code the runtime has not compiled yet), then each round every case
// for every system, the systems in the opposite order every other round, so the machine's drift
// touches all alike. Our runs get the plugin's hop profile.
type rounds struct {
	oc          opencode
	model       *mockmodel.Server
	project     string // the runs' Project, and the labels' prefix
	profilePath string
	// fail ends the benchmark with what the caller knows of the failure (its screen, its logs).
	fail func(format string, args ...any)
	// profiled is the most lines the profile file held after one of our runs.
	profiled int
}

// one plays case c for sys at position pos of round (0: the warm-up).
func (r *rounds) one(round, pos int, sys system, c fanCase) *run {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	got, err := fanOut(ctx, r.oc, r.model, sys, c, fmt.Sprintf("%s-r%d-%s-%s", r.project, round, c.Key, sys.name))
	if err != nil {
		r.fail("%s, round %d, %s, %s: %v", r.project, round, c.Name, sys.name, err)
		return nil
	}
	got.Round, got.Position, got.Project = round, pos, r.project
	if sys.name == ours.name {
		p, err := readProfile(r.profilePath)
		if err != nil {
			r.fail("profile: %v", err)
			return nil
		}
		r.profiled = max(r.profiled, p.lines)
		for k := range got.Tasks {
			got.Tasks[k].Profile = p.points(got.Tasks[k])
		}
	}
	time.Sleep(settle)
	return got
}

// play runs the warm-up and n rounds of cs.
func (r *rounds) play(cs []fanCase, n int) (warmup, runs []*run) {
	for pos, sys := range systems {
		warmup = append(warmup, r.one(0, pos, sys, cases[0]))
	}
	for round := 1; round <= n; round++ {
		order := append([]system(nil), systems...)
		if round%2 == 0 {
			slices.Reverse(order)
		}
		for _, c := range cs {
			for pos, sys := range order {
				runs = append(runs, r.one(round, pos, sys, c))
			}
		}
	}
	return warmup, runs
}
