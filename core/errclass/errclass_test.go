package errclass

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// providerErrorCase is one row of testdata/provider_errors/*.json (a file per provider family):
// an error as a provider (or OpenCode) really words it, where the wording comes from, and the
// class it must get.
type providerErrorCase struct {
	Provider string        `json:"provider"`
	Source   string        `json:"source"`
	Error    ProviderError `json:"error"`
	Class    ErrorClass    `json:"class"`
}

func loadProviderErrors(t *testing.T) []providerErrorCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "provider_errors", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var cases []providerErrorCase
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		var some []providerErrorCase
		require.NoError(t, json.Unmarshal(raw, &some), f)
		require.NotEmpty(t, some, f)
		cases = append(cases, some...)
	}
	require.GreaterOrEqual(t, len(cases), 100)
	return cases
}

var allErrorClasses = []ErrorClass{
	ErrRateLimit, ErrServer, ErrOverloaded, ErrModelUnavailable, ErrQuota, ErrAuth,
	ErrNetwork, ErrTimeout, ErrContextLength, ErrAborted, ErrOther,
}

func TestClassifyErrorRealProviderErrors(t *testing.T) {
	for i, c := range loadProviderErrors(t) {
		t.Run(fmt.Sprintf("%s/%s/%d", c.Provider, c.Class, i), func(t *testing.T) {
			require.Contains(t, allErrorClasses, c.Class, "unknown class in the table")
			require.NotEmpty(t, c.Source)
			assert.Equal(t, c.Class, ClassifyError(c.Error), "%s\n%+v", c.Source, c.Error)
		})
	}
}

// Every class the classifier can return has real examples in the table, both sides of the
// fallback decision included.
func TestClassifyErrorTableCoversEveryClass(t *testing.T) {
	seen := map[ErrorClass]int{}
	for _, c := range loadProviderErrors(t) {
		seen[c.Class]++
	}
	for _, class := range allErrorClasses {
		if class == ErrTimeout {
			continue // ours alone, never read from a provider's text
		}
		assert.GreaterOrEqual(t, seen[class], 1, "no example of %s", class)
	}
}

func TestClassifyErrorNeverTimeout(t *testing.T) {
	for _, e := range []ProviderError{
		{Message: "timeout"},
		{Message: "Request timed out."},
		{Name: "APIError", Message: "Gateway Timeout", StatusCode: 504},
		{Message: "Provider response headers timed out after 300000ms"},
	} {
		assert.NotEqual(t, ErrTimeout, ClassifyError(e), "%+v", e)
	}
}

func TestClassifyErrorStatusRules(t *testing.T) {
	cases := []struct {
		name string
		e    ProviderError
		want ErrorClass
	}{
		{"bare 429", ProviderError{StatusCode: 429}, ErrRateLimit},
		{"429 quota wording", ProviderError{StatusCode: 429, Message: "insufficient_quota"}, ErrQuota},
		{"402", ProviderError{StatusCode: 402}, ErrQuota},
		{"401", ProviderError{StatusCode: 401, Message: "Unauthorized"}, ErrAuth},
		{"403", ProviderError{StatusCode: 403}, ErrAuth},
		{"404 without text", ProviderError{StatusCode: 404, Message: "Not Found"}, ErrModelUnavailable},
		{"413 without text", ProviderError{StatusCode: 413}, ErrContextLength},
		{"408", ProviderError{StatusCode: 408}, ErrNetwork},
		{"500", ProviderError{StatusCode: 500}, ErrServer},
		{"502", ProviderError{StatusCode: 502}, ErrServer},
		{"503 without text", ProviderError{StatusCode: 503, Message: "Service Unavailable"}, ErrServer},
		{"504", ProviderError{StatusCode: 504, Message: "Gateway Timeout"}, ErrServer},
		{"529", ProviderError{StatusCode: 529}, ErrOverloaded},
		{"plain 400", ProviderError{StatusCode: 400, Message: "Invalid request"}, ErrOther},
		{"400 validation", ProviderError{StatusCode: 422, Message: "Unprocessable Entity: messages.0.content: Field required"}, ErrOther},
		// A 400 is read for context, quota, auth and model only: a rate-limit or network word
		// inside a bad request does not make it a provider failure.
		{"400 mentioning a rate limit", ProviderError{StatusCode: 400, Message: "rate_limit: must be a positive integer"}, ErrOther},
		{"400 context wins", ProviderError{StatusCode: 400, Message: "Bad Request", ResponseBody: `{"error":{"code":"context_length_exceeded"}}`}, ErrContextLength},
		{"unknown name, no status, no text", ProviderError{Name: "SomethingNew", Message: "huh"}, ErrOther},
		{"empty", ProviderError{}, ErrOther},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, ClassifyError(c.e))
		})
	}
}

// OpenCode's named verdicts are taken as they are, whatever the message says.
func TestClassifyErrorNames(t *testing.T) {
	assert.Equal(t, ErrAborted, ClassifyError(ProviderError{Name: "MessageAbortedError", Message: "rate limit"}))
	assert.Equal(t, ErrContextLength, ClassifyError(ProviderError{Name: "ContextOverflowError", Message: "Conversation history too large to compact - exceeds model context limit"}))
	assert.Equal(t, ErrAuth, ClassifyError(ProviderError{Name: "ProviderAuthError", Message: "whatever"}))
	assert.Equal(t, ErrOther, ClassifyError(ProviderError{Name: "MessageOutputLengthError"}))
	assert.Equal(t, ErrOther, ClassifyError(ProviderError{Name: "ContentFilterError", Message: "overloaded"}))
}

func TestErrorClassFallbackCompactFirstSplit(t *testing.T) {
	fallback := map[ErrorClass]bool{
		ErrRateLimit: true, ErrServer: true, ErrOverloaded: true, ErrModelUnavailable: true,
		ErrQuota: true, ErrAuth: true, ErrNetwork: true, ErrTimeout: true,
	}
	for _, c := range allErrorClasses {
		assert.Equal(t, fallback[c], c.Fallback(), "%s.Fallback()", c)
		assert.Equal(t, c == ErrContextLength, c.CompactFirst(), "%s.CompactFirst()", c)
		assert.False(t, c.Fallback() && c.CompactFirst(), "%s is both", c)
	}
	// Neither: the task fails at once, on any model it would fail alike.
	for _, c := range []ErrorClass{ErrAborted, ErrOther, ErrorClass("")} {
		assert.False(t, c.Fallback() || c.CompactFirst(), "%s", c)
	}
}
