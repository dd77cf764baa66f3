//go:build !unix

package host

import (
	"os"

	"github.com/asyncagents/asyncagents/core"
)

// FileStat is what the core's follow.look takes of a followed log's stat. With no inode here, a
// log replaced by a compaction is seen as such only when it is shorter than what was read.
func FileStat(info os.FileInfo) *core.FileStat {
	return &core.FileStat{Size: info.Size()}
}
