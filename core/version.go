package core

import "github.com/asyncagents/asyncagents/core/internal/version"

// Version is the core's own version, reported to hosts (the ABI's version op, /v1/health).
const Version = version.Version
