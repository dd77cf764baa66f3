package core

import "regexp"

// markupTag finds the start of a tag of the notice's own markup in text a child wrote: the
// result block, the usage block and the partial work block, opening or closing, in any case and
// with the spaces a model would still read as the tag.
var markupTag = regexp.MustCompile(`(?i)<(\s*/?\s*(?:task_result|usage|partial_work)\b)`)

// escapeMarkup writes the notice's own tags in a child's text as text ("&lt;/task_result>"), so
// that an answer cannot close its result block early or add a <usage> of its own: the parent
// sees exactly one result block and one usage block per task, the ones the core wrote. A child
// reads untrusted pages and files, and its answer may carry what they said. Everything else is
// left as the child wrote it.
func escapeMarkup(s string) string {
	return markupTag.ReplaceAllString(s, "&lt;$1")
}
