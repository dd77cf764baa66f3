//go:build unix

package host

import (
	"os"
	"syscall"

	"github.com/asyncagents/asyncagents/core"
)

// FileStat is what the core's follow.look takes of a followed log's stat: its device, inode and
// size.
func FileStat(info os.FileInfo) *core.FileStat {
	st := &core.FileStat{Size: info.Size()}
	if sys, ok := info.Sys().(*syscall.Stat_t); ok {
		st.Dev, st.Ino = uint64(sys.Dev), uint64(sys.Ino) //nolint:unconvert // their types vary by OS
	}
	return st
}
