// Package ssetest reads a Server-Sent Events stream for the tests: the status API's, OpenCode's
// and the mock model's. One reader, so each test helper does not parse the format its own way.
package ssetest

import (
	"bufio"
	"io"
	"strings"
)

// Frame is one event of a stream: its name ("" when it has none) and its data (several data
// lines joined with "\n").
type Frame struct {
	Event string
	Data  string
	ID    string
}

// Reader reads the frames of a stream, one at a time.
type Reader struct {
	sc *bufio.Scanner
}

// NewReader reads frames from r; a data line may be as long as 64 MiB.
func NewReader(r io.Reader) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 64<<20)
	return &Reader{sc: sc}
}

// Next returns the next frame, or the read's error (io.EOF when the stream ended; a frame the
// end cut off is not returned). A comment line (":" first) and a blank frame are skipped.
func (r *Reader) Next() (Frame, error) {
	var f Frame
	var data []string
	hasData := false
	for r.sc.Scan() {
		line := r.sc.Text()
		if line == "" {
			if f.Event == "" && !hasData {
				continue
			}
			f.Data = strings.Join(data, "\n")
			return f, nil
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			f.Event = value
		case "data":
			data, hasData = append(data, value), true
		case "id":
			f.ID = value
		}
	}
	if err := r.sc.Err(); err != nil {
		return Frame{}, err
	}
	return Frame{}, io.EOF
}
