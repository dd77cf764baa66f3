package core

// Version is the core's own version, reported to hosts (the ABI's version op, /v1/health).
const Version = "0.1.0"
