package core

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/asyncagents/asyncagents/core/config"
	"github.com/stretchr/testify/require"
)

var (
	partBlock = regexp.MustCompile(`(?s)\n<task_result>\n(.*)\n</task_result>`)
	nextPart  = regexp.MustCompile(`offset=(\d+)\) for the next part\]$`)
)

// readPages reads a task's result through asyncagents_output, part after part, checking that
// each answer fits OpenCode's cut; it returns the parts joined and how many answers it took.
func readPages(h *fbHarness, id string, limit int) (string, int) {
	var whole strings.Builder
	offset, calls := 0, 0
	for {
		calls++
		require.Less(h.t, calls, 1000, "bounded")
		args := fmt.Sprintf(`{"task_id":%q,"offset":%d}`, id, offset)
		if limit > 0 {
			args = fmt.Sprintf(`{"task_id":%q,"offset":%d,"limit":%d}`, id, offset, limit)
		}
		out := h.call(ToolOutput, args).Output
		require.LessOrEqual(h.t, len(out), openCodeOutputBytes, "within OpenCode's bytes")
		require.Less(h.t, strings.Count(out, "\n"), openCodeOutputLines, "within OpenCode's lines")
		m := partBlock.FindStringSubmatch(out)
		require.NotNil(h.t, m, out[:200])
		whole.WriteString(m[1])
		n := nextPart.FindStringSubmatch(out)
		if n == nil {
			return whole.String(), calls
		}
		next, _ := strconv.Atoi(n[1])
		require.Greater(h.t, next, offset)
		offset = next
	}
}

// A 2 MB result, with characters of several bytes and many short lines, reads back whole
// through asyncagents_output's parts, each under OpenCode's cut; a result that fits comes whole
// in one answer, as before.
func TestOutputPagesALongResult(t *testing.T) {
	h := newFB(t, config.Config{})
	id := h.launch()
	var b strings.Builder
	for i := 0; b.Len() < 2_000_000; i++ {
		fmt.Fprintf(&b, "line %d: é中🙂 %s\n", i, strings.Repeat("x", i%300))
	}
	result := strings.TrimSpace(b.String())
	h.answer(id, "", result)
	got, calls := readPages(h, id, 0)
	require.Equal(t, result, got)
	require.Greater(t, calls, 40, "2 MB takes many parts")
	got, _ = readPages(h, id, 30_000)
	require.Equal(t, result, got, "a smaller limit pages the same result")

	short := h.launch()
	h.answer(short, "", "all done")
	out := h.call(ToolOutput, fmt.Sprintf(`{"task_id":%q}`, short)).Output
	require.Contains(t, out, "\n<task_result>\nall done\n</task_result>")
	require.NotContains(t, out, "result: characters")
}

// Bad paging arguments are refused, naming them.
func TestOutputPagingArguments(t *testing.T) {
	h := newFB(t, config.Config{})
	id := h.launch()
	h.answer(id, "", "twelve chars")
	for args, want := range map[string]string{
		`"offset":-1`:     "argument offset must be a whole number",
		`"offset":1.5`:    "argument offset must be a whole number",
		`"limit":0`:       "argument limit must be a whole number of characters from 1 to 40000",
		`"limit":50000`:   "argument limit must be a whole number of characters from 1 to 40000",
		`"offset":12`:     "argument offset 12 is past the end of the result, which has 12 characters",
		`"offset":"next"`: "argument offset must be a number",
	} {
		reply := h.call(ToolOutput, fmt.Sprintf(`{"task_id":%q,%s}`, id, args))
		require.Contains(t, reply.Error, want, args)
	}
	out := h.call(ToolOutput, fmt.Sprintf(`{"task_id":%q,"offset":7,"limit":3}`, id)).Output
	require.Contains(t, out, "result: characters 7 to 10 of 12\n")
	require.Contains(t, out, "<task_result>\ncha\n</task_result>")
	require.Contains(t, out, "[2 characters more; call asyncagents_output(task_id=")
}
