package placement

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDecide(t *testing.T) {
	up := func(name string, free int) Place { return Place{Name: name, Up: true, Free: free} }
	down := func(name string, free int) Place { return Place{Name: name, Free: free} }
	resting := func(name string, free int) Place { return Place{Name: name, Resting: true, Free: free} }
	for _, c := range []struct {
		name      string
		want      string
		localFree int
		workers   []Place
		out       Decision
	}{
		{"default is local", "", 0, []Place{up("w1", 9)}, Decision{}},
		{"local", "local", 0, []Place{up("w1", 9)}, Decision{}},
		{"auto: most free", "auto", 1, []Place{up("w1", 2), up("w2", 3)}, Decision{Worker: "w2"}},
		{"auto: tie goes to local", "auto", 3, []Place{up("w1", 3), up("w2", 3)}, Decision{}},
		{"auto: tie between workers goes to the first", "auto", 1, []Place{up("w1", 3), up("w2", 3)}, Decision{Worker: "w1"}},
		{"auto: a down worker is skipped", "auto", 1, []Place{down("w1", 4), up("w2", 2)}, Decision{Worker: "w2"}},
		{"auto: all full stays local", "auto", 0, []Place{up("w1", 0), up("w2", -1)}, Decision{}},
		{"auto: every worker down", "auto", 0, []Place{down("w1", 4)}, Decision{}},
		{"auto: a resting worker counts, its health first", "auto", 1, []Place{up("w1", 2), resting("w2", 3)}, Decision{Worker: "w2", Check: true}},
		{"auto: an up worker wins a tie with a resting one after it", "auto", 1, []Place{up("w1", 3), resting("w2", 3)}, Decision{Worker: "w1"}},
		{"auto: a followed worker wins a tie with a resting one before it", "auto", 1, []Place{resting("w1", 3), up("w2", 3)}, Decision{Worker: "w2"}},
		{"named resting: health first", "w2", 5, []Place{resting("w2", 3)}, Decision{Worker: "w2", Check: true}},
		{"named up, even full", "w1", 5, []Place{up("w1", 0)}, Decision{Worker: "w1"}},
		{"named down: health first", "w1", 5, []Place{down("w1", 4)}, Decision{Worker: "w1", Check: true}},
		{"named, state unknown: health first", "w3", 5, nil, Decision{Worker: "w3", Check: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.out, Decide(c.want, c.localFree, c.workers))
		})
	}
}
