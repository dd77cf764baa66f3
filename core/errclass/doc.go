// Package errclass classifies a failed model call: from OpenCode's error name, the provider's
// HTTP status and its wording, the kind of failure (rate limit, server, quota, context length…)
// and so whether the task moves to the next model of its chain. It decides nothing about tasks.
// It is a leaf: it imports only the standard library.
package errclass
