package abi

import (
	"strconv"

	"github.com/asyncagents/asyncagents/core/internal/jsonw"
)

// MarshalJSON writes the fields a response holds, each with its own type's encoder, as
// encoding/json would write the struct (the same keys, order and omitempty rules). encoding/json
// builds the encoders of a struct's whole type graph at its first use: for Response (tasks,
// effects, config, tools, HTTP answers) that is reflection over the whole graph, interpreted
// inside WebAssembly before the engine's compilers catch up, on the path from a plugin's start to
// its first answer, whatever the call held. TestResponseEncodesAsTheStruct holds this to the struct's own encoding.
func (r Response) MarshalJSON() ([]byte, error) {
	b := append(make([]byte, 0, 256), `{"ok":`...)
	b = strconv.AppendBool(b, r.OK)
	var err error
	field := func(name string, v any) {
		if err == nil {
			b, err = jsonw.KeyValue(b, name, v)
		}
	}
	if r.Error != "" {
		field("error", r.Error)
	}
	if len(r.Effects) > 0 && err == nil {
		b = append(b, `,"effects":`...)
		b, err = appendEffects(b, r.Effects)
	}
	if r.ABI != 0 {
		field("abi", r.ABI)
	}
	if r.Version != "" {
		field("version", r.Version)
	}
	if len(r.Tools) > 0 {
		field("tools", r.Tools)
	}
	if len(r.Subscribe) > 0 {
		field("subscribe", r.Subscribe)
	}
	if r.Config != nil {
		field("config", r.Config)
	}
	if r.ConfigError != "" {
		field("configError", r.ConfigError)
	}
	if r.Recovery != nil {
		field("recovery", r.Recovery)
	}
	if len(r.Tasks) > 0 {
		field("tasks", r.Tasks)
	}
	if r.Task != nil {
		field("task", r.Task)
	}
	if r.Restore != nil {
		field("restore", r.Restore)
	}
	if r.Storage != nil {
		field("storage", r.Storage)
	}
	if r.Histories != nil {
		field("histories", r.Histories)
	}
	if r.Table != "" {
		field("table", r.Table)
	}
	if r.HTTP != nil {
		b = append(b, `,"http":`...)
		b = appendHTTPResponse(b, r.HTTP)
	}
	if r.ServerFile != "" {
		field("serverFile", r.ServerFile)
	}
	if r.State != "" {
		field("state", r.State)
	}
	if r.Follow != nil {
		field("follow", r.Follow)
	}
	if len(r.Paths) > 0 {
		field("paths", r.Paths)
	}
	if r.Report != "" {
		field("report", r.Report)
	}
	if len(r.Servers) > 0 {
		field("servers", r.Servers)
	}
	if r.Trouble {
		field("trouble", r.Trouble)
	}
	if r.CLI != nil {
		field("cli", r.CLI)
	}
	if r.UsageError != "" {
		field("usageError", r.UsageError)
	}
	if r.Link != nil {
		field("link", r.Link)
	}
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}
