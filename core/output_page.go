package core

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// Paging a long result. OpenCode 1.18 cuts a tool's output past 51,200 bytes (UTF-8) or 2,000
// lines (its ToolOutputStore's MAX_BYTES and MAX_LINES) and says "The tool call succeeded but
// the output was truncated", so asyncagents_output answers a result longer than that in parts:
// each part's text stays under both limits with the answer around it, and the answer says
// where the next part starts (offset, in characters). A part never splits a character.

const (
	// openCodeOutputBytes and openCodeOutputLines are OpenCode's cut of a tool's output.
	openCodeOutputBytes = 51_200
	openCodeOutputLines = 2_000
	// pageMarginBytes and pageMarginLines are kept free for the answer's lines around a part.
	pageMarginBytes = 3_200
	pageMarginLines = 60
	// maxPageChars bounds asyncagents_output's limit: no part is longer, whatever its bytes.
	maxPageChars = 40_000
)

// page is the part of a result an output call asks for: from offset, at most limit characters.
type page struct {
	offset, limit int
	asked         bool // offset or limit was given
}

// parsePage checks asyncagents_output's offset and limit.
func parsePage(offset, limit *float64) (page, error) {
	p := page{limit: maxPageChars, asked: offset != nil || limit != nil}
	if offset != nil {
		o := *offset
		if math.IsNaN(o) || o < 0 || o != math.Trunc(o) || o > math.MaxInt32 {
			return p, fmt.Errorf(outputBadOffsetFmt, o)
		}
		p.offset = int(o)
	}
	if limit != nil {
		l := *limit
		if math.IsNaN(l) || l < 1 || l != math.Trunc(l) || l > maxPageChars {
			return p, fmt.Errorf(outputBadLimitFmt, maxPageChars, l)
		}
		p.limit = int(l)
	}
	return p, nil
}

// cutPage returns the part of r from p.offset (characters): at most p.limit characters, and
// no more bytes or lines than budgetBytes and budgetLines; next is where the part after it
// starts, 0 when it reaches the end. total is r's length in characters.
func cutPage(r string, p page, budgetBytes, budgetLines int) (part string, next, total int) {
	total = utf8.RuneCountInString(r)
	start, n := len(r), 0
	for i := range r {
		if n == p.offset {
			start = i
			break
		}
		n++
	}
	end, chars, lines := start, 0, 1
	for i, c := range r[start:] {
		size := utf8.RuneLen(c)
		if chars == p.limit || i+size > budgetBytes || (c == '\n' && lines == budgetLines) {
			break
		}
		if c == '\n' {
			lines++
		}
		end, chars = start+i+size, chars+1
	}
	if p.offset+chars < total {
		next = p.offset + chars
	}
	return r[start:end], next, total
}

// resultBlock is a completed task's result in an output answer: whole when it fits OpenCode's
// cut and no part was asked for, else the part asked for, with where it sits and how to get the
// next. head is the answer before the block, which the part's budget leaves room for.
func resultBlock(t *run, p page, head string) (string, error) {
	budgetBytes := openCodeOutputBytes - pageMarginBytes - len(head)
	budgetLines := openCodeOutputLines - pageMarginLines - strings.Count(head, "\n")
	r := t.Result
	if !p.asked && len(r) <= budgetBytes && strings.Count(r, "\n") < budgetLines {
		return fmt.Sprintf("\n<task_result>\n%s\n</task_result>", r), nil
	}
	total := utf8.RuneCountInString(r)
	if p.offset > 0 && p.offset >= total {
		return "", fmt.Errorf(outputOffsetPastEndFmt, p.offset, total)
	}
	part, next, _ := cutPage(r, p, max(budgetBytes, 1_000), max(budgetLines, 20))
	end := p.offset + utf8.RuneCountInString(part)
	var b strings.Builder
	fmt.Fprintf(&b, outputPartFmt, p.offset, end, total)
	fmt.Fprintf(&b, "\n<task_result>\n%s\n</task_result>", part)
	if next > 0 {
		fmt.Fprintf(&b, "\n\n"+outputNextPartFmt, total-next, t.ID, next)
	}
	return b.String(), nil
}
