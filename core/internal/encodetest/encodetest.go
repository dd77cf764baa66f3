// Package encodetest holds what the tests of the core's hand-written JSON encoders share: the
// variants of a struct to encode both ways, and the strings whose encoding has something to
// escape. Only tests import it; it imports none of the core's packages.
package encodetest

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

// FieldVariants returns the zero value, all (whose exported fields must all be set: a field
// added to the struct and not to the test fails here), each exported field of all alone, and all
// with each awkward string in each string field.
func FieldVariants[T any](t *testing.T, all T) []T {
	t.Helper()
	v := reflect.ValueOf(all)
	var zero T
	out := []T{zero, all}
	for i := range v.NumField() {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		require.False(t, v.Field(i).IsZero(), "set %s in this test's all", v.Type().Field(i).Name)
		var alone T
		reflect.ValueOf(&alone).Elem().Field(i).Set(v.Field(i))
		out = append(out, alone)
		if v.Field(i).Kind() == reflect.String {
			for _, s := range AwkwardStrings {
				c := all
				reflect.ValueOf(&c).Elem().Field(i).SetString(s)
				out = append(out, c)
			}
		}
	}
	return out
}

// AwkwardStrings are the strings whose JSON encoding has something to escape, each kind once.
var AwkwardStrings = []string{"", "plain", `say "hi"`, `back\slash`, "line\nbreak\ttab\r\b\f\x01", "<b>&amp;</b>", "résumé ✓", "\u2028\u2029", "bad \xff utf-8"}
