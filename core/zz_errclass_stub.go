// TEMPORARY STUB, owned by the lead: it stands in for core/errclass.go (being written by a
// helper) so the package builds meanwhile. Whoever adds core/errclass.go deletes this file.

package core

import "strings"

type ErrorClass string

const (
	ErrRateLimit        ErrorClass = "rate_limit"
	ErrServer           ErrorClass = "server"
	ErrOverloaded       ErrorClass = "overloaded"
	ErrModelUnavailable ErrorClass = "model_unavailable"
	ErrQuota            ErrorClass = "quota"
	ErrAuth             ErrorClass = "auth"
	ErrNetwork          ErrorClass = "network"
	ErrTimeout          ErrorClass = "timeout"
	ErrContextLength    ErrorClass = "context_length"
	ErrAborted          ErrorClass = "aborted"
	ErrOther            ErrorClass = "other"
)

type ProviderError struct {
	Name, Message string
	StatusCode    int
	ResponseBody  string
}

func ClassifyError(e ProviderError) ErrorClass {
	t := strings.ToLower(e.Message + " " + e.ResponseBody)
	switch {
	case strings.Contains(t, "context") || strings.Contains(t, "too long"):
		return ErrContextLength
	case e.StatusCode == 429 || strings.Contains(t, "rate limit"):
		return ErrRateLimit
	case e.StatusCode >= 500:
		return ErrServer
	case e.Name == "MessageAbortedError":
		return ErrAborted
	}
	return ErrOther
}

func (c ErrorClass) Fallback() bool {
	switch c {
	case ErrRateLimit, ErrServer, ErrOverloaded, ErrModelUnavailable, ErrQuota, ErrAuth, ErrNetwork, ErrTimeout:
		return true
	}
	return false
}

func (c ErrorClass) CompactFirst() bool { return c == ErrContextLength }
