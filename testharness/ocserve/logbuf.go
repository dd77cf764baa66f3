package ocserve

import (
	"bytes"
	"strings"
	"sync"
)

// logBuffer collects the child's stdout and stderr (both may write at once)
// and signals the first "listening" line so the health probe can fire early.
type logBuffer struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	listening chan struct{}
	once      sync.Once
}

func newLogBuffer() *logBuffer { return &logBuffer{listening: make(chan struct{})} }

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if strings.Contains(string(p), "listening on") {
		l.once.Do(func() { close(l.listening) })
	}
	return len(p), nil
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
