package core

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A worker up, one down with its reason, one never reached: each row says its health, how long
// it has been so and why, its load as running/maxTasks, its queue and its version.
func TestWorkersTableShowsHealthLoadAndVersion(t *testing.T) {
	body := `{"workers":[
	 {"name":"w1","url":"https://w1.example:4096","state":"up","version":"1.18.33","running":2,"queued":0,"maxTasks":4,"lastChangeAt":1000},
	 {"name":"w2","url":"https://w2.example:4096","state":"down","error":"wrong username or password (401)","running":0,"queued":3,"maxTasks":2,"lastChangeAt":61000},
	 {"name":"w3","url":"http://127.0.0.1:4097","state":"unknown","running":0,"queued":0,"maxTasks":4},
	 {"name":"w4","url":"http://127.0.0.1:4098","state":"up","version":"1.18.33","running":1,"queued":0,"maxTasks":4,"lastChangeAt":1000,"pollMs":1000}]}`
	got, err := WorkersTable(body, 121_000)
	require.NoError(t, err)
	require.Equal(t, ""+
		"NAME  URL                      RUNNING  QUEUED  VERSION  HEALTH\n"+
		"w1    https://w1.example:4096  2/4      0       1.18.33  up for 2m 0s\n"+
		"w2    https://w2.example:4096  0/2      3       -        down for 1m 0s: wrong username or password (401)\n"+
		"w3    http://127.0.0.1:4097    0/4      0       -        unknown\n"+
		"w4    http://127.0.0.1:4098    1/4      0       1.18.33  up for 2m 0s, polled every 1.0s\n", got)
}

func TestWorkersTableWithNoWorkersOrABadAnswer(t *testing.T) {
	got, err := WorkersTable(`{"workers":[]}`, 1)
	require.NoError(t, err)
	require.Equal(t, NoWorkers, got)
	_, err = WorkersTable(`<html>`, 1)
	require.ErrorContains(t, err, "the server's answer to /v1/workers is not its JSON")
}
