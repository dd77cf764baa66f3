package core

// The log's size, for the compaction: lines that keep their large fields (history_keep.go) are
// small, so a count of lines no longer tells how far the log has outgrown what it holds. Bytes do:
// what was written since the log was last whole, against what its live tasks take written whole.

// compactMinBytes: a log smaller than this is not compacted for its size.
const compactMinBytes = 1 << 20

// logSize is what the machine knows of its log's bytes.
type logSize struct {
	logBytes  int // the log's length as written (the restore's, the compaction's, and appends since)
	liveBytes int // what the live tasks take written whole (run.recordBytes, summed)
}

// wrote counts a line of t appended: line bytes in the log, t now whole bytes when whole.
func (s *logSize) wrote(t *run, line, whole int) {
	s.logBytes += line
	s.liveBytes += whole - t.recordBytes
	t.recordBytes = whole
}

// outgrown reports whether the log holds more than twice what its tasks take.
func (s *logSize) outgrown() bool {
	return s.logBytes > compactMinBytes && s.logBytes > 2*s.liveBytes
}

// restored sets the sizes after a restore of a log of n bytes.
func (m *Machine) sizeRestored(n int) {
	m.size = logSize{logBytes: n}
	for _, t := range m.tasks {
		if t.recordBytes == 0 {
			t.recordBytes = t.logLen + 18
		}
		m.size.liveBytes += t.recordBytes
	}
}
