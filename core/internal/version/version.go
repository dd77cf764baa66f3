// Package version holds the core's own version, for the layers that report it (the status
// API's health answer, the ABI's version op). It is a leaf: it imports nothing.
package version

// Version is the core's own version.
const Version = "0.1.0"
