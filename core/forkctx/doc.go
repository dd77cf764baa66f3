// Package forkctx renders what a forked child is told about its parent's conversation (the
// preamble, the messages, tool calls and their cut results) within a token budget, and estimates
// tokens without a vocabulary (EstimateTokens). It takes OpenCode's messages as JSON and returns
// text; it decides nothing about tasks. It is a leaf: it imports only the standard library.
package forkctx
