// Package filesize holds the repository's size rules as a test: every hand-written file has one
// job and at most 450 lines, and the README, a user's guide, at most 260 lines of at most 120
// characters. Data (test fixtures, images, lock files, generated files) is not held to them.
package filesize

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const (
	maxLines       = 450
	maxReadmeLines = 260
	maxReadmeWidth = 120
)

// exempt says whether path is data or generated, not a file someone writes and reads as code or
// prose.
func exempt(path string) bool {
	base := filepath.Base(path)
	switch {
	case strings.Contains(path, "/testdata/"), strings.HasPrefix(path, "testdata/"):
		return true
	case strings.Contains(base, ".gen."), strings.HasSuffix(base, "_gen.go"):
		return true
	case base == "go.sum", base == "package-lock.json", base == "bun.lock", base == "bun.lockb":
		return true
	}
	switch filepath.Ext(base) {
	case ".png", ".jpg", ".svg", ".wasm", ".json", ".html":
		return true
	}
	return false
}

func repoRoot(t *testing.T) string {
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("the size rules read the files git holds: not in a git checkout: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func TestHandWrittenFilesStayUnder450Lines(t *testing.T) {
	root := repoRoot(t)
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, path := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if path == "" || exempt(path) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			continue // listed but gone from the work tree: nothing to measure
		}
		if bytes.IndexByte(b, 0) >= 0 {
			continue // binary
		}
		checked++
		if n := bytes.Count(b, []byte("\n")); n > maxLines {
			t.Errorf("%s has %d lines; at most %d (split it by job)", path, n, maxLines)
		}
	}
	if checked < 100 {
		t.Fatalf("only %d files checked: the listing is not the repository's", checked)
	}
}

func TestTheReadmeStaysAGuide(t *testing.T) {
	f, err := os.Open(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines++
		if w := len([]rune(sc.Text())); w > maxReadmeWidth {
			t.Errorf("README.md line %d has %d characters; at most %d", lines, w, maxReadmeWidth)
		}
	}
	if lines > maxReadmeLines {
		t.Errorf("README.md has %d lines; at most %d", lines, maxReadmeLines)
	}
}
