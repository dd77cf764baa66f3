// Package placement decides where a new task runs: on the local OpenCode or on one of the
// workers (config.Config.Workers), from the placement asked for and the places' state. It decides
// without the machine, in the spirit of core/slots: the machine gives it each place's free slots
// and whether its stream is up, and carries out the answer (docs/rationale/workers.md).
package placement

import "github.com/asyncagents/asyncagents/core/config"

// Place is a worker as placement sees it.
type Place struct {
	Name string
	// Up: its event stream is connected. Such a worker takes an "auto" task.
	Up bool
	// Resting: its stream is closed on purpose and its health did not say it is out of reach.
	// It takes an "auto" task too, after a health check.
	Resting bool
	// Free is its free slots: maxTasks minus the tasks it holds (running or queued for it).
	Free int
}

// Local is the local OpenCode's name in a Decision ("").
const Local = ""

// Decision is where a launch goes: Worker ("" for local), and Check when the worker's stream is
// not known up (a named worker's, or a resting one "auto" picked), so its health must be asked
// before the launch is answered.
type Decision struct {
	Worker string
	Check  bool
}

// Auto picks the place with the most free slots: the local machine (localFree) and every worker
// whose stream is up or that rests; ties go to local, then to a worker followed over a resting
// one, then to the first worker in the order given.
func Auto(localFree int, workers []Place) string {
	best, bestFree, bestResting := Local, localFree, false
	for _, w := range workers {
		// On a tie between workers, one followed wins over one resting (no wake to pay for).
		tie := w.Free == bestFree && best != Local && bestResting && w.Up
		if (w.Up || w.Resting) && (w.Free > bestFree || tie) {
			bestResting = !w.Up
			best, bestFree = w.Name, w.Free
		}
	}
	return best
}

// Decide places a launch that asked for want ("", "local", "auto" or a worker's name, checked
// valid beforehand): a named worker is taken whatever its load (its full slots queue the task
// there), with a health check first when its stream is not up.
func Decide(want string, localFree int, workers []Place) Decision {
	switch want {
	case "", config.WorkerLocal:
		return Decision{}
	case config.WorkerAuto:
		d := Decision{Worker: Auto(localFree, workers)}
		for _, w := range workers {
			if w.Name == d.Worker && !w.Up {
				d.Check = true // it rests: asked before a task goes there
			}
		}
		return d
	}
	for _, w := range workers {
		if w.Name == want {
			return Decision{Worker: want, Check: !w.Up}
		}
	}
	return Decision{Worker: want, Check: true}
}
