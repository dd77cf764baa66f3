package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/asyncagents/asyncagents/core"
	"github.com/asyncagents/asyncagents/core/abi"
	"github.com/asyncagents/asyncagents/core/httpapi"
	"github.com/asyncagents/asyncagents/core/view"
)

// constant is a value of the core's that the plugin needs too, under its TypeScript name.
type constant struct {
	goName string
	tsName string
	value  any
}

// constants are written after the types, each with its Go doc.
var constants = []constant{
	{"ABIVersion", "ABI_VERSION", abi.ABIVersion},
	{"Version", "CORE_VERSION", core.Version},
	{"DefaultAPIPort", "DEFAULT_API_PORT", core.DefaultAPIPort},
	{"StreamBufferFrames", "STREAM_BUFFER_FRAMES", core.StreamBufferFrames},
	{"StopGraceMs", "STOP_GRACE_MS", core.StopGraceMs},
	{"APITokenBytes", "API_TOKEN_BYTES", core.APITokenBytes},
	{"FollowIntervalMs", "FOLLOW_INTERVAL_MS", core.FollowIntervalMs},
	{"FollowWatchedIntervalMs", "FOLLOW_WATCHED_INTERVAL_MS", core.FollowWatchedIntervalMs},
	{"APIIdleTimeoutMs", "API_IDLE_TIMEOUT_MS", core.APIIdleTimeoutMs},
	{"APIMaxConnections", "API_MAX_CONNECTIONS", core.APIMaxConnections},
	{"APIErrStarting", "API_ERR_STARTING", core.APIErrStarting},
	{"APIErrCoreUnavailable", "API_ERR_CORE_UNAVAILABLE", core.APIErrCoreUnavailable},
	{"APIErrCoreFailed", "API_ERR_CORE_FAILED", core.APIErrCoreFailed},
	{"APIErrShuttingDown", "API_ERR_SHUTTING_DOWN", core.APIErrShuttingDown},
	{"APIErrBusy", "API_ERR_BUSY", core.APIErrBusy},
	{"APIErrLogsStopped", "API_ERR_LOGS_STOPPED", core.APIErrLogsStopped},
	{"APIErrLogsFailed", "API_ERR_LOGS_FAILED", core.APIErrLogsFailed},
	{"APIErrLogsNoOpenCode", "API_ERR_LOGS_NO_OPENCODE", core.APIErrLogsNoOpenCode},
	{"EnvAPIPort", "ENV_API_PORT", core.EnvAPIPort},
	{"EnvAPIAuth", "ENV_API_AUTH", core.EnvAPIAuth},
	{"TmuxPaneEnv", "TMUX_PANE_ENV", core.TmuxPaneEnv},
	{"HookCompacting", "HOOK_COMPACTING", core.HookCompacting},
	{"HookTurnEnd", "HOOK_TURN_END", core.HookTurnEnd},
	{"HookStopping", "HOOK_STOPPING", core.HookStopping},
	{"MaxRequestBodyBytes", "MAX_REQUEST_BODY_BYTES", httpapi.MaxRequestBodyBytes},
	{"StorageDirName", "STORAGE_DIR_NAME", core.StorageDirName},
	{"ServerDirPrefix", "SERVER_DIR_PREFIX", core.ServerDirPrefix},
	{"DataHomeDefault", "DATA_HOME_DEFAULT", core.DataHomeDefault},
	{"ServerFileExt", "SERVER_FILE_EXT", core.ServerFileExt},
	{"LiveRefreshMs", "VIEW_LIVE_REFRESH_MS", view.LiveRefreshMs},
	{"SectionTitle", "VIEW_TITLE", view.SectionTitle},
	{"CommandSlash", "VIEW_COMMAND_SLASH", view.CommandSlash},
	{"CommandDescription", "VIEW_COMMAND_DESCRIPTION", view.CommandDescription},
	{"Unavailable", "VIEW_UNAVAILABLE", view.Unavailable},
	{"HeartbeatTimer", "HEARTBEAT_TIMER", core.HeartbeatTimer},
	{"ProgressTimer", "PROGRESS_TIMER", core.ProgressTimer},
	{"CLIUsage", "CLI_USAGE", core.CLIUsage},
	{"NoServer", "VIEW_NO_SERVER", view.NoServer},
	{"NoServerAfterMs", "VIEW_NO_SERVER_AFTER_MS", view.NoServerAfterMs},
	{"OnWorkerPrefix", "VIEW_ON_WORKER", view.OnWorkerPrefix},
	{"WorkerHealthMs", "WORKER_HEALTH_MS", core.WorkerHealthMs},
	{"WorkerAuthFailed", "WORKER_AUTH_FAILED", core.WorkerAuthFailed},
	{"WorkerRefused", "WORKER_REFUSED", core.WorkerRefused},
	{"WorkerClosed", "WORKER_CLOSED", core.WorkerClosed},
}

func tsConstants(d *docSet) (string, error) {
	var b strings.Builder
	for _, c := range constants {
		v, err := json.Marshal(c.value)
		if err != nil {
			return "", fmt.Errorf("%s: %w", c.goName, err)
		}
		lit := string(v)
		if _, ok := c.value.([]string); ok {
			lit = strings.ReplaceAll(lit, ",", ", ") + " as readonly string[]"
		}
		b.WriteString("\n")
		b.WriteString(jsDoc(d.value(c.goName), ""))
		fmt.Fprintf(&b, "export const %s = %s;\n", c.tsName, lit)
	}
	return b.String(), nil
}
