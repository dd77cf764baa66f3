package core

import "strings"

// Where each followed log was read to. Both hosts look at the other processes' logs (when their
// folder changes, or on a timer: FollowIntervalMs, FollowWatchedIntervalMs); what a look reads is
// decided here, once: the host stats the log and asks
// (FollowLook), reads what the answer says, and hands the bytes to the follow op, which keeps the
// complete lines and notes how far it got. A line still being written waits for the next look.
// A new instance (after a trap) knows no log, and reads each whole again.

// FileStat is a host's stat of a followed log: the file's identity (device and inode: a
// compaction renames a new file over the log) and its size.
type FileStat struct {
	Dev  uint64 `json:"dev"`
	Ino  uint64 `json:"ino"`
	Size int64  `json:"size"`
}

// FollowRead answers a look at a followed log: whether to read it, from which byte to its end,
// whether what is read replaces all the log's tasks (the log is new to this machine, or another
// file), and whether this is the first read, which sends the log's index (a histories plan's
// indexes names it) so its tasks load from it.
type FollowRead struct {
	Read    bool  `json:"read,omitempty"`
	From    int64 `json:"from,omitempty"`
	Replace bool  `json:"replace,omitempty"`
	First   bool  `json:"first,omitempty"`
}

// followMark is where a log was read to, in which file.
type followMark struct {
	dev, ino uint64
	offset   int64
}

// followPending is a read a look asked for, whose bytes the follow op brings.
type followPending struct {
	mark    followMark // the file, and where the read starts
	replace bool
}

// FollowLook says what to read of the log source, which stat describes (nil: there is no such
// file). A log gone that was read before drops its tasks at once: its effects come with the
// answer, and there is nothing to read.
func (m *Machine) FollowLook(now int64, source string, stat *FileStat) (FollowRead, RestoreResult, []Effect) {
	last, known := m.followMarks[source]
	delete(m.followPending, source)
	if stat == nil {
		if !known {
			return FollowRead{}, RestoreResult{}, nil
		}
		delete(m.followMarks, source)
		res, effects := m.FollowSource(now, source, "", "", true)
		return FollowRead{}, res, effects
	}
	replace := !known || last.dev != stat.Dev || last.ino != stat.Ino || stat.Size < last.offset
	if !replace && stat.Size == last.offset {
		return FollowRead{}, RestoreResult{}, nil
	}
	from := last.offset
	if replace {
		from = 0
	}
	if m.followPending == nil {
		m.followPending = map[string]followPending{}
	}
	m.followPending[source] = followPending{mark: followMark{dev: stat.Dev, ino: stat.Ino, offset: from}, replace: replace}
	return FollowRead{Read: true, From: from, Replace: replace, First: !known}, RestoreResult{}, nil
}

// FollowBytes applies the bytes a host read as the last FollowLook of source said (from its From
// to the end of the file): the complete lines, noting how far they go; index is the log's index
// on a first read. With no look pending, data is complete lines and replace says what they are,
// as FollowSource takes them.
func (m *Machine) FollowBytes(now int64, source, data, index string, replace bool) (RestoreResult, []Effect) {
	p, pending := m.followPending[source]
	if !pending {
		return m.FollowSource(now, source, data, index, replace)
	}
	delete(m.followPending, source)
	complete := strings.LastIndexByte(data, '\n') + 1
	switch {
	case complete == 0 && !p.replace:
		return RestoreResult{}, nil // a line still being written
	case complete == 0:
		// Nothing whole in a log read anew: its tasks go, and the next look reads it anew, as a
		// first read (with its index) when it is.
		delete(m.followMarks, source)
	default:
		p.mark.offset += int64(complete)
		if m.followMarks == nil {
			m.followMarks = map[string]followMark{}
		}
		m.followMarks[source] = p.mark
	}
	if !p.replace {
		index = ""
	}
	return m.FollowSource(now, source, data[:complete], index, p.replace)
}
