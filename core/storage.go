package core

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"strconv"
	"strings"
)

// Storage is where a host keeps the plugin's files. The layout is a format both hosts must agree
// on (the Go CLI reads what the plugin wrote), so the core works it out from what the host knows.
type Storage struct {
	Dir     string `json:"dir"`     // the plugin's storage directory
	History string `json:"history"` // this project's task history log
	// HistoryKey names the project's logs: history-<key>.log, written before logs had owners,
	// and history-<key>.<owner>.log, one per process (history_files.go). HistoryOwner is this
	// process's owner (the storage op's env.pid and procStat), whose log History then is.
	HistoryKey   string `json:"historyKey"`
	HistoryOwner string `json:"historyOwner,omitempty"`
	// HistoryIndex is the log's index (history_index.go), which a host reads with the log and
	// replaces when the core says (history.index).
	HistoryIndex string `json:"historyIndex"`
	// ServerDir holds this project's status API discovery files, one per process serving it
	// (serverfile.go); ServerJSON is this process's own (the storage op's env.pid).
	ServerDir  string `json:"serverDir"`
	ServerJSON string `json:"serverJSON"`
	// ModelHealth is the circuit breaker's state file (health.go), shared by every project.
	ModelHealth string `json:"modelHealth"`
	// Worktrees is this project's folder of isolated tasks' worktrees (core/worktree): outside
	// the repository, so neither OpenCode's snapshots nor the user's git status see them.
	Worktrees string `json:"worktrees"`
	APIPorts  []int  `json:"apiPorts"` // the ports the status API tries, in order (then any)
	// ConfigFiles are the config file candidates, lowest precedence first (core/config/file.go): the
	// host reads those that exist and passes them to init.
	ConfigFiles []string `json:"configFiles"`
}

// StoragePaths places the plugin's files in OpenCode's data directory ($XDG_DATA_HOME, else
// ~/.local/share), in a folder of our own. Each project directory gets its own history and its
// own folder of server files, so two OpenCode processes on two projects never write one file.
//
// projectDir is the project's absolute path with its symlinks resolved (the hosts resolve it:
// the core has no file system), so a project reached through a symlink or a "..", is one
// project. The key is the path cleaned, hashed.
func StoragePaths(xdgDataHome, home, projectDir string) Storage {
	data := xdgDataHome
	if data == "" {
		data = path.Join(home, DataHomeDefault)
	}
	dir := path.Join(data, StorageDirName)
	key := projectKey(projectDir)
	return Storage{
		Dir:          dir,
		History:      path.Join(dir, "history-"+key+".log"),
		HistoryIndex: path.Join(dir, "history-"+key+".idx"),
		ServerDir:    path.Join(dir, ServerDirPrefix+key),
		ModelHealth:  path.Join(dir, ModelHealthFile),
		Worktrees:    path.Join(dir, "worktrees", key),
		HistoryKey:   key,
	}
}

// StorageDirName is the plugin's storage directory under the data directory ($XDG_DATA_HOME,
// else DataHomeDefault under the home directory), ServerDirPrefix starts the name of each
// project's folder of server files in it, and ServerFileExt ends a server file's name after its
// process's pid. OpenCode's terminal UI module, which runs in the plugin's process without the
// core, finds its process's server file with these names (bridge/abi_types.gen.ts) as
// <data>/StorageDirName/ServerDirPrefix*/<pid>ServerFileExt.
const (
	DataHomeDefault = ".local/share"
	StorageDirName  = "opencode/asyncagents"
	ServerDirPrefix = "servers-"
	ServerFileExt   = ".json"
)

// OwnHistory makes s the storage of process pid (started at procStart, "" where unknown): its
// own log and index (history_files.go).
func (s Storage) OwnHistory(pid int, procStart string) Storage {
	if owner := historyOwner(pid, procStart); owner != "" {
		s.HistoryOwner = owner
		s.History = path.Join(s.Dir, historyName(s.HistoryKey, owner, 0, "log"))
		s.HistoryIndex = path.Join(s.Dir, historyName(s.HistoryKey, owner, 0, "idx"))
	}
	return s
}

// projectKey names a project's files: 16 hex digits of the SHA-256 of its cleaned path.
func projectKey(projectDir string) string {
	if projectDir != "" {
		projectDir = path.Clean(projectDir)
	}
	sum := sha256.Sum256([]byte(projectDir))
	return hex.EncodeToString(sum[:8])
}

// ServerFilePath is the server file of process pid, in a project's ServerDir: each process that
// serves the project has its own, so none overwrites or removes another's.
func ServerFilePath(serverDir string, pid int) string {
	return path.Join(serverDir, strconv.Itoa(pid)+ServerFileExt)
}

// DefaultAPIPort is the status API's first port; ASYNCAGENTS_API_PORT overrides it.
const DefaultAPIPort = 5165

// APIPorts lists the ports a status API server tries in order: the configured one (or 5165) and
// the nine after it. A host falls back to any free port (0) when all are taken.
func APIPorts(configured string) []int {
	first := DefaultAPIPort
	if apiPortOK(configured) {
		first, _ = strconv.Atoi(configured)
	}
	ports := make([]int, 10)
	for i := range ports {
		ports[i] = first + i
	}
	return ports
}

// maxFirstAPIPort is the highest first port: it and the nine after it are tried, and must be ports.
const maxFirstAPIPort = 65535 - 9

// apiPortOK reports whether s, digits only, names a first port APIPorts takes (the CLIs refuse
// any other, in its words: cliPortRange).
func apiPortOK(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n > 0 && n <= maxFirstAPIPort && strings.Trim(s, "0123456789") == ""
}
