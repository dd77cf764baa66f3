package core

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/asyncagents/asyncagents/core/config"
)

// healthWrites is the content of each model health write in effects.
func healthWrites(effects []Effect) []string {
	var out []string
	for _, e := range effects {
		if e.Kind == EffectStateWrite && e.File == ModelHealthFile {
			out = append(out, e.Content)
		}
	}
	return out
}

// Two processes share the model health file. Each write merges the file as it is now: A's
// failures survive B's write of its own, and A's later success closes the circuit in B too,
// where B had restored A's older failures.
func TestModelHealthMergesOtherProcessesFigures(t *testing.T) {
	cfg := config.Config{}
	cfg.Fallback.FailureThreshold = 2
	a, b := NewMachine(cfg), NewMachine(cfg)
	file := ""
	write := func(m *Machine, now int64) {
		m.now = now
		require.NotEmpty(t, healthWrites(m.out), "a change is written")
		m.out = nil
		file = m.MergeHealth(file) // the host reads the file, the core merges it, the host writes
	}
	b.RestoreHealth(file) // B starts before A has failed
	a.now = 10
	a.recordHealth("p/x", false, "boom")
	write(a, 10)
	a.now = 11
	a.recordHealth("p/x", false, "boom")
	write(a, 11)
	require.Equal(t, []string{"p/x failures=2 open=true"}, a.ModelHealth())

	b.now = 12
	b.recordHealth("p/y", false, "bang")
	write(b, 12)
	require.Equal(t, []string{"p/x failures=2 open=true", "p/y failures=1 open=false"}, b.ModelHealth(),
		"B's write kept A's figures, and B now skips the model A found failing")

	c := NewMachine(cfg) // a third process, started now
	c.RestoreHealth(file)
	require.Equal(t, b.ModelHealth(), c.ModelHealth())

	// A success in A closes the circuit; B's next write takes that over its own older record.
	a.now = 20
	a.recordHealth("p/x", true, "")
	write(a, 20)
	b.now = 21
	b.recordHealth("p/y", false, "bang")
	write(b, 21)
	require.Equal(t, []string{"p/y failures=2 open=true"}, b.ModelHealth())
	d := NewMachine(cfg)
	d.RestoreHealth(file)
	d.now = 22
	require.False(t, d.circuitOpen("p/x"), "the success is the last word on p/x")
	require.True(t, d.circuitOpen("p/y"))

	// A success is kept a day, then dropped from the file.
	b.now = 21 + healthSuccessKeptMs + 1
	require.NotContains(t, b.MergeHealth(file), `"p/x"`)
}
