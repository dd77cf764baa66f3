package abi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"slices"
	"unsafe"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/httpapi"
	"github.com/asyncagents/asyncagents/core/task"
)

// ABIVersion is the version of the JSON envelope every host speaks to the core. A host refuses
// a module whose version differs from its own, naming both (see ABI.md at the repository's root).
const ABIVersion = 1

// Request is the envelope a host sends: one operation, the time, and the operation's input.
type Request struct {
	Op     string         `json:"op"`
	Now    int64          `json:"now,omitempty"`
	Config *config.Config `json:"config,omitempty"`
	Event  *core.Event    `json:"event,omitempty"`
	TaskID string         `json:"taskID,omitempty"`
	// History is the task history log's content, for restore; for follow, the bytes read as
	// the follow.look before said (from its from to the end of the file), or with no look, the
	// lines appended since the last call (or the whole log, with Replace); for messages,
	// OpenCode's messages of a task's session, as its API gave them; for workers.table, the
	// status API's answer to GET /v1/workers.
	History string `json:"history,omitempty"`
	Replace bool   `json:"replace,omitempty"`
	// Source names the log another process writes, for follow and follow.look
	// (core/history_files.go): its tasks are shown, never acted on. "" for a reader's own view
	// of one log.
	Source string `json:"source,omitempty"`
	// Stat is the followed log's stat, for follow.look; absent: the file does not exist.
	Stat *core.FileStat `json:"stat,omitempty"`
	// Merged names the adopted logs whose content follows the own log's in History, for
	// restore (each after a newline: the host adds one to a log that lacks it). The core folds
	// them into the own log and has them removed.
	Merged []string `json:"merged,omitempty"`
	// Files are the names in the storage directory, Procs what the host found out about the pids
	// the last answer asked for, and Adopt whether this is the start (logs of writers gone are
	// taken), for the histories op.
	Files []string        `json:"files,omitempty"`
	Procs []core.ProcInfo `json:"procs,omitempty"`
	Adopt bool            `json:"adopt,omitempty"`
	// Index is the history index file's content, for restore (history_index.go). Sent raw, it
	// is the first IndexLen bytes after the NUL byte, and the history the rest (ABI.md).
	Index    string `json:"index,omitempty"`
	IndexLen int    `json:"indexLen,omitempty"`
	// State is the model health file's content (core.ModelHealthFile), for restore and
	// state.merge.
	State string `json:"state,omitempty"`
	// HTTP is a request to the status API, for the http op.
	HTTP *httpapi.Request `json:"http,omitempty"`
	// Server describes a status API server, for the server.file op (core/serverfile.go); ProcStat is
	// the host's /proc/self/stat line, when it has one, which gives Server its ProcStart.
	Server   *core.ServerFile `json:"server,omitempty"`
	ProcStat string           `json:"procStat,omitempty"`
	// Env is what a host knows of its environment, for the storage and histories ops:
	// XDG_DATA_HOME, XDG_CONFIG_HOME, HOME, the project directory and the pid (with ProcStat, it
	// names the process's own history log).
	Env *StorageEnv `json:"env,omitempty"`
	// ConfigFiles are the config files the storage op named that exist, in its order, for init
	// (core/config/file.go).
	ConfigFiles []config.ConfigFile `json:"configFiles,omitempty"`
	// Options are the plugin options of opencode.json as the user wrote them, for init: checked
	// and layered as a config file is (config.ApplyOptions), under the config files. Config then
	// holds only what the host sets itself.
	Options json.RawMessage `json:"options,omitempty"`
	// Seed is random text from the host, for init: it keeps the task IDs of two processes
	// apart (taskid.go). Without it, IDs are unique within the process only.
	Seed string `json:"seed,omitempty"`
	// HistorySync, for init: the host writes the history to a file, whose writes can fail, and
	// answers history.sync (core/storage_fault.go).
	HistorySync bool `json:"historySync,omitempty"`
	// Traps are the traps the host saw, for init of an instance made after one (trap.go): the
	// last is the one just seen, the others those the previous Recovery said to keep.
	Traps []core.Trap `json:"traps,omitempty"`
	// Doctor is what the host found, for the doctor op; its ServerFiles and Procs (and Project),
	// for the servers op.
	Doctor *core.DoctorFacts `json:"doctor,omitempty"`
	// Command is the CLI command (dashboard, workers) the servers op picks a server for.
	Command string `json:"command,omitempty"`
	// Banner is what serve.banner writes out.
	Banner *core.ServeBanner `json:"banner,omitempty"`
	// Code is the one-time code the server gave, for dashboard.link; Failure why the request of
	// dashboard.link or workers.table to Server (the servers op's pick) got no answer.
	Code    string `json:"code,omitempty"`
	Failure string `json:"failure,omitempty"`
	// Args are a CLI's command line, without the program's name, for cli.args (with Env's
	// APIPort, $ASYNCAGENTS_API_PORT as set).
	Args []string `json:"args,omitempty"`
}

// StorageEnv is a host's environment, as the storage op reads it.
type StorageEnv struct {
	XDGDataHome   string `json:"xdgDataHome,omitempty"`
	XDGConfigHome string `json:"xdgConfigHome,omitempty"` // for the global config file
	Home          string `json:"home,omitempty"`
	Directory     string `json:"directory,omitempty"`
	APIPort       string `json:"apiPort,omitempty"` // ASYNCAGENTS_API_PORT as set
	PID           int    `json:"pid,omitempty"`     // the host's process: names its server file
	// Git, for init: false when the project directory is in no git repository (isolated tasks
	// are then refused at launch); absent: unknown, worktree.create finds out.
	Git *bool `json:"git,omitempty"`
}

// Response is the envelope the core answers with. OK false means Error says what went wrong and
// nothing changed.
type Response struct {
	OK      bool          `json:"ok"`
	Error   string        `json:"error,omitempty"`
	Effects []core.Effect `json:"effects,omitempty"`

	// version and init
	ABI       int             `json:"abi,omitempty"`
	Version   string          `json:"version,omitempty"`
	Tools     []core.ToolSpec `json:"tools,omitempty"`
	Subscribe []string        `json:"subscribe,omitempty"`
	Config    *config.Config  `json:"config,omitempty"`
	// ConfigError names the invalid config file and field; the machine then runs on the host's
	// options alone and refuses asyncagents_task with this text.
	ConfigError string `json:"configError,omitempty"`
	// Recovery answers an init that carried traps: what to tell the user, and whether to stop.
	Recovery *core.Recovery `json:"recovery,omitempty"`

	// tasks and task
	Tasks []task.Task `json:"tasks,omitempty"`
	Task  *task.Task  `json:"task,omitempty"`

	// restore
	Restore *core.RestoreResult `json:"restore,omitempty"`
	// storage
	Storage *core.Storage `json:"storage,omitempty"`
	// histories
	Histories *core.HistoryPlan `json:"histories,omitempty"`
	// table and workers.table
	Table string `json:"table,omitempty"`
	// http
	HTTP *httpapi.Response `json:"http,omitempty"`
	// server.file: the server file's content
	ServerFile string `json:"serverFile,omitempty"`
	// state.merge: the model health file's content to write (core.Machine.MergeHealth)
	State string `json:"state,omitempty"`
	// follow.look: what to read of the log (core.Machine.FollowLook)
	Follow *core.FollowRead `json:"follow,omitempty"`
	// doctor.files: the files doctor reads; doctor (and serve.banner): its report; servers: the live servers,
	// the most recently started first
	Paths   []string          `json:"paths,omitempty"`
	Report  string            `json:"report,omitempty"`
	Servers []core.ServerFile `json:"servers,omitempty"`
	// doctor: something stops the plugin here, and the CLI exits 1 (core.DoctorReport)
	Trouble bool `json:"trouble,omitempty"`
	// cli.args: the command to run; or Report, the help or version to print (exit 0); or
	// UsageError, the command line's fault with the usage (exit 2)
	CLI        *core.CLIArgs `json:"cli,omitempty"`
	UsageError string        `json:"usageError,omitempty"`
	// dashboard.link: the dashboard command's next step
	Link *core.DashboardLink `json:"link,omitempty"`
}

// Runtime owns one Machine behind the JSON envelope. It is what the wasm module exports and
// what the native twin tests call, so both run the very same dispatch code.
type Runtime struct {
	m *core.Machine
	// keptAll: the last call was a restore, whose allocations are the restored tasks and the
	// history they point into (see KeptAll).
	keptAll bool
}

// KeptAll reports whether the last call kept nearly all it allocated: a restore builds the
// machine's state and little else. The module skips its garbage collection after such a call:
// what it allocated is the state it keeps, so a collection would find next to nothing to free
// and only delay the first answer after a restart.
func (r *Runtime) KeptAll() bool { return r.keptAll }

// NewRuntime returns a runtime with a machine on default configuration.
func NewRuntime() *Runtime { return &Runtime{m: core.NewMachine(config.Config{})} }

// Call decodes one request, runs it and encodes the response. It never panics: a panic in the
// core becomes an error response, so a bug costs one call, not the instance.
//
// Call takes req over: the history after the NUL byte is read in place, and the tasks restored
// from it keep their strings inside it, so the caller must not change req afterwards. (The
// module's hosts free the buffer after the call and never write to it again; copying 10 MB of
// history took 20 ms in Bun.)
func (r *Runtime) Call(req []byte) (out []byte) {
	r.keptAll = false
	defer func() {
		if p := recover(); p != nil {
			out = encode(Response{Error: fmt.Sprintf("core panic: %v", p)})
		}
	}()
	// A NUL byte (never part of JSON text) ends the envelope; the bytes after it are the
	// history, raw. Sent inside the JSON, 10 MB of history is escaped by the host and unescaped
	// here, which takes longer than restoring it.
	var payload []byte
	if i := bytes.IndexByte(req, 0); i >= 0 {
		req, payload = req[:i], req[i+1:]
	}
	q, err := decodeRequest(req)
	if err != nil {
		return encode(Response{Error: "bad request envelope: " + err.Error()})
	}
	if q.IndexLen > 0 {
		if q.IndexLen > len(payload) {
			return encode(Response{Error: fmt.Sprintf("indexLen %d is more than the %d bytes after the envelope", q.IndexLen, len(payload))})
		}
		q.Index = unsafe.String(&payload[0], q.IndexLen)
		payload = payload[q.IndexLen:]
	}
	if len(payload) > 0 {
		q.History = unsafe.String(&payload[0], len(payload))
	}
	resp := r.handle(q)
	if resp.HTTP != nil && resp.HTTP.Body != "" {
		// The status API's body travels raw after a NUL byte too: escaped into the envelope, a
		// page of tasks is encoded twice here and parsed twice by the host.
		body := resp.HTTP.Body
		resp.HTTP.Body = ""
		out := encode(resp)
		return append(append(out, 0), body...)
	}
	return encode(resp)
}

// DecodeResponse reads a response envelope as the core sends it: the JSON envelope and, after a
// NUL byte, the raw body of an http op's answer (ABI.md).
func DecodeResponse(raw []byte) (Response, error) {
	var body []byte
	if i := bytes.IndexByte(raw, 0); i >= 0 {
		raw, body = raw[:i], raw[i+1:]
	}
	var r Response
	if err := json.Unmarshal(raw, &r); err != nil {
		return Response{}, err
	}
	if body != nil && r.HTTP != nil {
		r.HTTP.Body = string(body)
	}
	return r, nil
}

func (r *Runtime) handle(q Request) Response {
	switch q.Op {
	case "version":
		return Response{OK: true, ABI: ABIVersion, Version: core.Version}
	case "init":
		cfg := config.Config{}
		if q.Config != nil {
			cfg = *q.Config
		}
		configError := ""
		cfg, err := config.ApplyOptions(cfg, q.Options)
		if err != nil {
			configError = err.Error()
		}
		merged, err := config.ApplyConfigFiles(cfg, q.ConfigFiles)
		if err != nil && configError == "" {
			configError = err.Error()
		}
		setup := core.Setup{ConfigError: configError, Seed: q.Seed, HistorySync: q.HistorySync}
		if e := q.Env; e != nil && e.Directory != "" {
			setup.Project, setup.NoGit = e.Directory, e.Git != nil && !*e.Git
			setup.Worktrees = core.StoragePaths(e.XDGDataHome, e.Home, e.Directory).Worktrees
		}
		r.m = core.NewMachineWith(merged, setup)
		c := r.m.Config()
		return Response{OK: true, ABI: ABIVersion, Version: core.Version, Tools: core.Tools(), Subscribe: core.SubscribedEvents(), Config: &c, ConfigError: configError, Recovery: core.Recover(q.Traps)}
	case "step":
		if q.Event == nil {
			return Response{Error: "step: missing event"}
		}
		return Response{OK: true, Effects: r.m.Step(q.Now, *q.Event)}
	case "storage":
		if q.Env == nil || (q.Env.XDGDataHome == "" && q.Env.Home == "") {
			return Response{Error: "storage: env needs xdgDataHome or home"}
		}
		s := core.StoragePaths(q.Env.XDGDataHome, q.Env.Home, q.Env.Directory)
		if q.Env.PID > 0 {
			s.ServerJSON = core.ServerFilePath(s.ServerDir, q.Env.PID)
			s = s.OwnHistory(q.Env.PID, core.ProcStatStart(q.ProcStat))
		}
		s.APIPorts = core.APIPorts(q.Env.APIPort)
		s.ConfigFiles = config.ConfigCandidates(q.Env.XDGConfigHome, q.Env.Home, q.Env.Directory)
		return Response{OK: true, Storage: &s}
	case "restore":
		// A restore allocates the whole store at once; collecting while it grows (the
		// collector inside WebAssembly stops the world) only repeats work: about a third of
		// a 10,000-task restore. What it allocated is the state it keeps (KeptAll): the
		// next collection comes once the heap has doubled from there.
		defer debug.SetGCPercent(debug.SetGCPercent(-1))
		r.keptAll = true
		r.m.RestoreHealth(q.State)
		r.m.MergeAtRestore(q.Merged)
		res, effects := r.m.RestoreIndexed(q.Now, q.History, q.Index)
		return Response{OK: true, Restore: &res, Effects: effects}
	case "state.merge":
		// A state.write's content, merged with the file as the host read it just now.
		return Response{OK: true, State: r.m.MergeHealth(q.State)}
	case "follow.look":
		read, res, effects := r.m.FollowLook(q.Now, q.Source, q.Stat)
		return Response{OK: true, Follow: &read, Restore: &res, Effects: effects}
	case "follow":
		res, effects := r.m.FollowBytes(q.Now, q.Source, q.History, q.Index, q.Replace)
		return Response{OK: true, Restore: &res, Effects: effects}
	case "histories":
		if q.Env == nil || (q.Env.XDGDataHome == "" && q.Env.Home == "") {
			return Response{Error: "histories: env needs xdgDataHome or home"}
		}
		s := core.StoragePaths(q.Env.XDGDataHome, q.Env.Home, q.Env.Directory).OwnHistory(q.Env.PID, core.ProcStatStart(q.ProcStat))
		plan := core.HistoryPlanFor(s.HistoryKey, s.HistoryOwner, q.Files, q.Procs, q.Adopt)
		// A log this machine holds tasks of stays followed when it is no longer listed: the
		// host reads it as gone, and its tasks go (taken over by a process that writes them).
		for _, held := range r.m.FollowedSources() {
			if len(plan.Check) == 0 && !slices.Contains(plan.Follow, held) {
				plan.Follow = append(plan.Follow, held)
			}
		}
		return Response{OK: true, Histories: &plan}
	case "tasks":
		return Response{OK: true, Tasks: r.m.Tasks()}
	case "http":
		if q.HTTP == nil {
			return Response{Error: "http: missing request"}
		}
		// A cancel (POST /v1/tasks/:id/cancel) changes state: its effects come with the answer.
		resp, effects := r.m.ServeHTTPEffects(*q.HTTP, r.m.Config().API, q.Now)
		return Response{OK: true, HTTP: &resp, Effects: effects}
	case "messages":
		// An answer to GET /v1/tasks/:id/messages whose Messages named a session: the host read
		// that session's messages from OpenCode (History holds them, raw) and the core puts them
		// in the conversation's shape.
		resp := httpapi.Conversation([]byte(q.History))
		return Response{OK: true, HTTP: &resp}
	case "table":
		return Response{OK: true, Table: core.TasksTable(r.m.Tasks(), q.Now)}
	case "workers.table":
		// History holds GET /v1/workers's answer, as the running server gave it to the CLI, or
		// Failure why Server gave none.
		if q.Failure != "" && q.Server != nil {
			return Response{Error: core.ServerAskFailure(*q.Server, "workers", q.Failure)}
		}
		table, err := core.WorkersTable(q.History, q.Now)
		if err != nil {
			return Response{Error: "workers.table: " + err.Error()}
		}
		return Response{OK: true, Table: table}
	case "server.file":
		if q.Server == nil {
			return Response{Error: "server.file: missing server"}
		}
		f := *q.Server
		// The host passes $ASYNCAGENTS_API_AUTH as it is; the file says what it means.
		f.Auth = config.APIAuthToken
		if (config.APIConfig{Auth: q.Server.Auth}).NoToken() {
			f.Auth = config.APIAuthNone
		}
		if f.ProcStart == "" {
			f.ProcStart = core.ProcStatStart(q.ProcStat)
		}
		// A core started read-only (asyncagents serve) says so in its file, whatever the host
		// passed: a command then takes the plugin's server before it, and doctor names it.
		f.ReadOnly = f.ReadOnly || (r.m != nil && r.m.Config().API.ReadOnly)
		return Response{OK: true, ServerFile: f.Content()}
	case "task":
		t, ok := r.m.Task(q.TaskID)
		if !ok {
			return Response{Error: fmt.Sprintf("no task %q", q.TaskID)}
		}
		return Response{OK: true, Task: &t}
	case "doctor.files":
		if q.Env == nil {
			return Response{Error: "doctor.files: missing env"}
		}
		return Response{OK: true, Paths: core.DoctorCandidates(q.Env.XDGConfigHome, q.Env.Home, q.Env.Directory)}
	case "doctor":
		if q.Doctor == nil {
			return Response{Error: "doctor: missing doctor"}
		}
		report, trouble := core.DoctorReport(*q.Doctor)
		return Response{OK: true, Report: report, Trouble: trouble}
	case "cli.args":
		port := ""
		if q.Env != nil {
			port = q.Env.APIPort
		}
		a, err := core.ParseCLIArgs(q.Args, port)
		switch {
		case err != nil:
			return Response{OK: true, UsageError: err.Error()}
		case a.Version:
			return Response{OK: true, Report: core.CLIVersionLine()}
		case a.Help != "":
			return Response{OK: true, Report: a.Help}
		}
		return Response{OK: true, CLI: &a}
	case "serve.banner":
		if q.Banner == nil {
			return Response{Error: "serve.banner: missing banner"}
		}
		return Response{OK: true, Report: q.Banner.Text()}
	case "dashboard.link":
		switch {
		case q.Server == nil:
			return Response{Error: "dashboard.link: missing server"}
		case q.Failure != "":
			return Response{Error: core.ServerAskFailure(*q.Server, "dashboard", q.Failure)}
		}
		l := core.DashboardLinkFor(*q.Server, q.Code)
		return Response{OK: true, Link: &l}
	case "servers":
		if q.Doctor == nil {
			return Response{OK: true}
		}
		live := core.LiveServerFiles(q.Doctor.ServerFiles, q.Doctor.Procs)
		if q.Command == "" {
			return Response{OK: true, Servers: live}
		}
		if len(live) == 0 {
			return Response{Error: core.NoServerText(q.Command, q.Doctor.Project)}
		}
		return Response{OK: true, Servers: live, Report: core.PickedServerLine(q.Command, live[0])}
	case "panic":
		// Exists so every host can prove that a panic comes back as an error envelope.
		panic("requested by the panic op")
	}
	return Response{Error: fmt.Sprintf("unknown op %q", q.Op)}
}

// encode calls Response.MarshalJSON itself: through json.Marshal its output would be scanned
// again (compacted), 10 MB of it for a tasks op over 10,000 tasks.
func encode(r Response) []byte {
	b, err := r.MarshalJSON()
	if err != nil {
		b, _ = Response{Error: "encoding the response failed: " + err.Error()}.MarshalJSON()
	}
	return b
}
