package core

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/asyncagents/asyncagents/core/httpapi"
)

// DoctorFacts is what a host found out for `asyncagents doctor` (and, its server files and procs
// alone, for the servers op): the core decides what they mean and writes the report.
type DoctorFacts struct {
	Project string `json:"project,omitempty"`
	// OpenCodeVersion is what `opencode --version` printed; OpenCodeError why it could not run.
	OpenCodeVersion string `json:"openCodeVersion,omitempty"`
	OpenCodeError   string `json:"openCodeError,omitempty"`
	// OpenCodeNotFound: there is no opencode on the PATH.
	OpenCodeNotFound bool `json:"openCodeNotFound,omitempty"`
	// Files are the files of DoctorCandidates that exist, read (Text) or not (Error).
	Files []config.ConfigFile `json:"files,omitempty"`
	// ServerFiles are the project's server files (Path, Text), Procs what the host knows of
	// their pids.
	ServerFiles []config.ConfigFile `json:"serverFiles,omitempty"`
	Procs       []ProcInfo          `json:"procs,omitempty"`
	// Probes are the answers of the live servers' GET /v1/health, by URL: "" when it answered;
	// Health the body of each answer (httpapi.APIHealth).
	Probes map[string]string `json:"probes,omitempty"`
	Health map[string]string `json:"health,omitempty"`
	// ConfigError is init's configError over the asyncagents config files.
	ConfigError string `json:"configError,omitempty"`
}

// DoctorCandidates lists the files doctor reads: OpenCode's config files (server and TUI, global
// and the project's) and the plugin's own config files.
func DoctorCandidates(xdgConfigHome, home, projectDir string) []string {
	global := ""
	switch {
	case xdgConfigHome != "":
		global = path.Join(xdgConfigHome, "opencode")
	case home != "":
		global = path.Join(home, ".config", "opencode")
	}
	var out []string
	if global != "" {
		out = append(out, path.Join(global, "config.json")) // OpenCode's older global name, still read
	}
	for _, base := range []string{"opencode", "tui"} {
		for _, d := range []string{global, projectDir, path.Join(projectDir, ".opencode")} {
			if d != "" && d != ".opencode" {
				out = append(out, path.Join(d, base+".json"), path.Join(d, base+".jsonc"))
			}
		}
	}
	return append(out, config.ConfigCandidates(xdgConfigHome, home, projectDir)...)
}

// LiveServerFiles are the server files whose writer still runs, in SortServers's order.
// A file not named <pid>.json after its own pid, unreadable, or stale is left out.
func LiveServerFiles(files []config.ConfigFile, procs []ProcInfo) []ServerFile {
	byPID := map[int]ProcInfo{}
	for _, p := range procs {
		byPID[p.PID] = p
	}
	var live []ServerFile
	for _, file := range files {
		f, err := ParseServerFile([]byte(file.Text))
		if err != nil || file.Error != "" || path.Base(file.Path) != strconv.Itoa(f.PID)+".json" {
			continue
		}
		p := byPID[f.PID]
		start := p.Start
		if start == "" {
			start = ProcStatStart(p.Stat)
		}
		if f.Live(p.Running, start) {
			live = append(live, f)
		}
	}
	SortServers(live)
	return live
}

// SortServers orders live servers as a command picks among them, the first being the one it
// talks to: the plugin's servers before a read-only `asyncagents serve` (the plugin's sees
// OpenCode, follows the workers and can cancel; serve only reads the history), then the most
// recently started first. Both CLIs and the doctor take this order.
func SortServers(live []ServerFile) {
	sort.SliceStable(live, func(i, j int) bool {
		if live[i].ReadOnly != live[j].ReadOnly {
			return !live[i].ReadOnly
		}
		return live[i].StartedAt > live[j].StartedAt
	})
}

// DoctorReport is what `asyncagents doctor` prints: what was found, and for what is missing, the
// fix. trouble: something stops the plugin from working here (the CLIs exit 1): OpenCode missing,
// no plugin server of OpenCode's running for the project or one that does not answer, no
// opencode.json that names the plugin (while none runs: one that does was found elsewhere), a
// config file in error. A missing tui.json entry is not: a headless OpenCode needs none.
func DoctorReport(f DoctorFacts) (report string, trouble bool) {
	var b strings.Builder
	line := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	line("asyncagents doctor: project %s", f.Project)
	if f.OpenCodeNotFound {
		f.OpenCodeError = "no opencode on the PATH"
	}
	live := LiveServerFiles(f.ServerFiles, f.Procs)
	plugin := slices.ContainsFunc(live, func(s ServerFile) bool { return !s.ReadOnly })
	answers := slices.ContainsFunc(live, func(s ServerFile) bool { return !s.ReadOnly && f.Probes[s.URL] == "" })
	switch {
	case f.OpenCodeVersion != "":
		line("OpenCode: %s", strings.TrimSpace(f.OpenCodeVersion))
	case answers && f.OpenCodeNotFound:
		// The plugin runs, so an OpenCode does: this shell's PATH just does not lead to it.
		line("OpenCode: not found here (%s), but the plugin below runs in one", f.OpenCodeError)
	case answers:
		line("OpenCode: could not run here (%s), but the plugin below runs in one", f.OpenCodeError)
	default:
		trouble = true
		line("OpenCode: not found (%s); asyncagents needs OpenCode 1.18 or later", f.OpenCodeError)
	}
	if !plugin {
		trouble = true
		line("plugin server: none running for this project. Start OpenCode here (restart it after a config")
		line("  edit; `opencode serve` loads plugins at its first request); if it runs, the plugin did not")
		line("  load: check the plugin entries below")
	}
	for _, s := range live {
		what := "plugin server"
		if s.ReadOnly {
			what = "asyncagents serve (read-only, the history only: not the plugin)"
		}
		if msg, probed := f.Probes[s.URL]; probed && msg != "" {
			trouble = trouble || !s.ReadOnly
			line("%s: %s (pid %d) does not answer: %s", what, s.URL, s.PID, msg)
		} else {
			line("%s: %s (pid %d, started %s) answers", what, s.URL, s.PID, s.StartedAt)
			trouble = healthLines(line, f.Health[s.URL], s.ReadOnly) || trouble
		}
	}
	found := map[string]bool{}
	for _, file := range f.Files {
		base := strings.TrimSuffix(strings.TrimSuffix(path.Base(file.Path), ".jsonc"), ".json")
		if base == config.ConfigFileBase {
			continue
		}
		if file.Error != "" {
			trouble = true
			line("%s: cannot be read: %s", file.Path, file.Error)
			continue
		}
		entries, err := config.PluginEntries(file.Path, file.Text)
		if err != nil {
			trouble = true
			line("%s: %v", file.Path, err)
			continue
		}
		var ours []string
		var optionErrs []error
		fromNPM := false
		for _, e := range entries {
			if isOurs(e.Spec) {
				ours = append(ours, strconv.Quote(e.Spec))
				fromNPM = fromNPM || !strings.Contains(e.Spec, "file:")
				if err := e.OptionsError(); err != nil {
					optionErrs = append(optionErrs, err)
				}
			}
		}
		if len(ours) == 0 {
			line("%s: no asyncagents entry in \"plugin\"", file.Path)
			continue
		}
		if base != "tui" {
			base = "opencode" // config.json is OpenCode's server config too
		}
		found[base] = true
		line("%s: plugin %s", file.Path, strings.Join(ours, ", "))
		if base == "opencode" { // the TUI module's options are its own
			for _, err := range optionErrs {
				trouble = true
				line("  %v", err)
			}
		}
		if fromNPM && !plugin {
			line("  OpenCode asks npm for a name, never a node_modules, and skips one npm lacks without a")
			line("  word: until asyncagents is published there, name the tarball (\"asyncagents@file:/path/to/")
			line("  asyncagents-%s.tgz\") or the built bundle (README, Install)", Version)
		}
	}
	if !found["opencode"] {
		// A plugin that answers was loaded from a config doctor does not read (a parent folder's
		// up to the git root, $OPENCODE_CONFIG): that is no trouble.
		trouble = trouble || !plugin
		line("opencode.json: no file names asyncagents: add it to \"plugin\" (README, Install), then restart OpenCode")
	}
	if !found["tui"] {
		line("tui.json: no file names asyncagents: the TUI's Background tasks section and /tasks need the same")
		line("  spec in tui.json's \"plugin\" (README, Install)")
	}
	configs := 0
	for _, file := range f.Files {
		if strings.HasPrefix(path.Base(file.Path), config.ConfigFileBase+".") {
			configs++
			line("config file: %s", file.Path)
		}
	}
	switch {
	case f.ConfigError != "":
		trouble = true
		line("config error: %s", f.ConfigError)
	case configs == 0:
		line("config file: none (the defaults, and the options in opencode.json)")
	}
	return b.String(), trouble
}

// isOurs says whether a plugin entry's spec is this package: its name (`asyncagents`,
// `asyncagents@<version or file:...>`), or a file: spec of its tarball or its built bundles.
// Another plugin whose name holds the word is not, nor is a path through a folder so named.
func isOurs(spec string) bool {
	if rest, ok := strings.CutPrefix(spec, "file:"); ok {
		base := path.Base(rest)
		return base == "asyncagents.js" || base == "asyncagents-tui.js" ||
			(strings.HasPrefix(base, "asyncagents-") && strings.HasSuffix(base, ".tgz"))
	}
	name, _, _ := strings.Cut(spec, "@")
	return name == "asyncagents"
}

// healthLines says what a server's /v1/health answer holds beyond its being up: a config error
// the running plugin started with (every launch fails until OpenCode restarts with it mended), or
// a history it cannot write. Either is trouble for the plugin's server.
func healthLines(line func(string, ...any), body string, readOnly bool) (trouble bool) {
	var h httpapi.APIHealth
	if body == "" || json.Unmarshal([]byte(body), &h) != nil {
		return false
	}
	switch {
	case h.ConfigError != "" && readOnly:
		line("  it started with a config error: %s", h.ConfigError)
	case h.ConfigError != "":
		line("  it started with a config error, and every launch fails: %s", h.ConfigError)
		line("  mend it, then restart OpenCode (a config is read at the plugin's start)")
	}
	if h.Reason != "" {
		line("  degraded: %s", h.Reason)
	}
	return !readOnly && (h.ConfigError != "" || h.Reason != "")
}
