package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

const okWorker = `"url":"https://w1.example:4096","passwordEnv":"W1_PASSWORD","directory":"/srv/repo"`

// Every refusal of a worker's config names the file and the field, and changes nothing.
func TestWorkerConfigRefusals(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"name with a capital", `{"workers":{"W1":{` + okWorker + `}}}`,
			`workers.W1: a worker's name must match ^[a-z0-9][a-z0-9_-]*$, got "W1"`},
		{"name auto", `{"workers":{"auto":{` + okWorker + `}}}`,
			`workers.auto: "auto" cannot name a worker: it is a placement of its own`},
		{"name local", `{"workers":{"local":{` + okWorker + `}}}`,
			`workers.local: "local" cannot name a worker: it is a placement of its own`},
		{"a password key", `{"workers":{"w1":{` + okWorker + `,"password":"hunter2"}}}`,
			`workers.w1.password: put the password in an environment variable and name it in passwordEnv`},
		{"no url", `{"workers":{"w1":{"passwordEnv":"P","directory":"/r"}}}`, `workers.w1: missing url`},
		{"no passwordEnv", `{"workers":{"w1":{"url":"https://h","directory":"/r"}}}`, `workers.w1: missing passwordEnv`},
		{"no directory", `{"workers":{"w1":{"url":"https://h","passwordEnv":"P"}}}`, `workers.w1: missing directory`},
		{"relative directory", `{"workers":{"w1":{"url":"https://h","passwordEnv":"P","directory":"repo"}}}`,
			`workers.w1.directory: must be an absolute path, got "repo"`},
		{"passwordEnv not a name", `{"workers":{"w1":{"url":"https://h","passwordEnv":"$P W","directory":"/r"}}}`,
			`workers.w1.passwordEnv: must be an environment variable's name, got "$P W"`},
		{"url not http", `{"workers":{"w1":{"url":"ftp://h","passwordEnv":"P","directory":"/r"}}}`,
			`workers.w1.url: must be an http:// or https:// URL, got "ftp://h"`},
		{"url without host", `{"workers":{"w1":{"url":"https://","passwordEnv":"P","directory":"/r"}}}`,
			`workers.w1.url: must be an absolute http:// or https:// URL, got "https://"`},
		{"url with credentials", `{"workers":{"w1":{"url":"https://u:pw@h","passwordEnv":"P","directory":"/r"}}}`,
			`workers.w1.url: must not hold a user or password: set username, and put the password in an environment variable and name it in passwordEnv`},
		{"http off loopback", `{"workers":{"w1":{"url":"http://10.0.0.5:4096","passwordEnv":"P","directory":"/r"}}}`,
			`workers.w1.url: http:// is only allowed on loopback (127.0.0.1, ::1, localhost): use https:// for 10.0.0.5, or set insecure: true (the password and the work then cross the network in clear)`},
		{"maxTasks 0", `{"workers":{"w1":{` + okWorker + `,"maxTasks":0}}}`, `workers.w1.maxTasks: must be a positive integer, got 0`},
		{"lostAfterMs too short", `{"workers":{"w1":{` + okWorker + `,"lostAfterMs":10}}}`,
			`workers.w1.lostAfterMs: must be an integer >= 1000, got 10`},
		{"restAfterMs too short", `{"workers":{"w1":{` + okWorker + `,"restAfterMs":0}}}`,
			`workers.w1.restAfterMs: must be an integer >= 1000, got 0`},
		{"username with a colon", `{"workers":{"w1":{` + okWorker + `,"username":"a:b"}}}`,
			`workers.w1.username: must be a user name without ":", got "a:b"`},
		{"unknown field", `{"workers":{"w1":{` + okWorker + `,"maxTask":3}}}`, `workers.w1.maxTask: unknown field (did you mean maxTasks?)`},
		{"agent on an unknown worker", `{"workers":{"w1":{` + okWorker + `}},"agents":{"explore":{"worker":"w9"}}}`,
			`agents.explore.worker: unknown worker "w9": the configured workers are w1; or use "auto" or "local"`},
		{"agent on a worker with none configured", `{"agents":{"explore":{"worker":"w1"}}}`,
			`agents.explore.worker: unknown worker "w1": none is configured (workers in asyncagents.json); or use "auto" or "local"`},
		{"agent worker not a name", `{"agents":{"explore":{"worker":"W 1"}}}`,
			`agents.explore.worker: must be a worker's name, "auto" or "local", got "W 1"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := Config{MaxDepth: 7}
			got, err := ApplyConfigFiles(base, []ConfigFile{{Path: projectJSON, Text: c.text}})
			require.EqualError(t, err, "asyncagents: "+projectJSON+": "+c.want)
			require.Equal(t, base, got, "a refused file changes nothing")
		})
	}
}

// Valid workers: defaults filled, http on loopback or with insecure, and a project's entry replacing
// the global one as a whole; an agent may name a worker set in another file.
func TestWorkerConfigAccepted(t *testing.T) {
	global := `{"workers":{"w1":{"url":"https://a:1","passwordEnv":"A","directory":"/a","maxTasks":9},
		"w2":{"url":"http://127.0.0.1:4097","passwordEnv":"B","directory":"/b"}}}`
	project := `{"workers":{"w1":{"url":"http://10.0.0.5:1","passwordEnv":"C","directory":"C:\\repo","insecure":true},
		"lo":{"url":"http://localhost:1","passwordEnv":"D","directory":"/d","rerunLost":true}},
		"agents":{"explore":{"worker":"w2"},"build":{"worker":"auto"},"plan":{"worker":"local"}}}`
	cfg, err := ApplyConfigFiles(Config{}, []ConfigFile{{Path: globalJSON, Text: global}, {Path: projectJSON, Text: project}})
	require.NoError(t, err)
	cfg = cfg.WithDefaults()
	require.Equal(t, WorkerConfig{URL: "http://10.0.0.5:1", Username: "opencode", PasswordEnv: "C", Directory: `C:\repo`,
		MaxTasks: 4, LostAfterMs: 60000, RestAfterMs: 60000, Insecure: true}, cfg.Workers["w1"], "the project's w1 replaces the global one as a whole")
	require.Equal(t, 4, cfg.Workers["w2"].MaxTasks)
	require.True(t, cfg.Workers["lo"].RerunLost)
	require.Equal(t, []string{"lo", "w1", "w2"}, cfg.WorkerNames())
	require.Equal(t, "w2", cfg.Agents["explore"].Worker)
	require.Empty(t, cfg.CheckPlacement("w2"))
	require.Empty(t, cfg.CheckPlacement(""))
	require.Equal(t, `unknown worker "w3": the configured workers are lo, w1, w2; or use "auto" or "local"`, cfg.CheckPlacement("w3"))
}

// The plugin options may name the workers too; a file's agent may then use one.
func TestWorkerInOptions(t *testing.T) {
	cfg, err := ApplyOptions(Config{}, []byte(`{"workers":{"w1":{`+okWorker+`}}}`))
	require.NoError(t, err)
	cfg, err = ApplyConfigFiles(cfg, []ConfigFile{{Path: projectJSON, Text: `{"agents":{"explore":{"worker":"w1"}}}`}})
	require.NoError(t, err)
	require.Equal(t, "w1", cfg.Agents["explore"].Worker)
	_, err = ApplyOptions(Config{}, []byte(`{"workers":{"w1":{"url":"https://x:y@h","passwordEnv":"P","directory":"/r"}}}`))
	require.ErrorContains(t, err, OptionsSource+": workers.w1.url: must not hold a user or password")
}
