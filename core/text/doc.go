// Package text is how the core writes a figure for people: a duration, a count with its noun, a
// token figure, a cost. Every format is written here once, and the machine, the tool answers,
// the notices and the views (package view, which the hosts draw) call it; a host writes none of
// its own. It is a leaf: it imports nothing of the core, so every layer may use it.
package text
