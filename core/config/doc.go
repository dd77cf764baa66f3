// Package config holds every limit and switch of the core (Config, with its defaults and their
// bounds) and the config files: where they may be, how JSON with comments is read (jsonc.go), the
// keys a file may hold and their checks (rules.go), and how the files layer over the plugin
// options (file.go). It reads no file itself: the host reads them and passes their text.
//
// It imports none of the core's packages: the layers above take a Config as a plain value.
package config
