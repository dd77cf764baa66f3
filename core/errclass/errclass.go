package errclass

import (
	"regexp"
	"sync"
)

// Error classes: what a failed model call means for a fallback chain (the machine acts on it in core/fallback.go).
//
// OpenCode ends a failed assistant message with one of its named errors (`{name, data}`):
// APIError {message, statusCode?, isRetryable, responseHeaders?, responseBody?, metadata?},
// ContextOverflowError {message, responseBody?}, ProviderAuthError {providerID, message},
// MessageAbortedError {message}, MessageOutputLengthError {}, StructuredOutputError,
// ContentFilterError, UnknownError {message}. The same object arrives in session.error, and a
// session.status of type "retry" carries only a message. Provider failures are nearly all
// APIErrors, so the class is read from the HTTP status first, then from the provider's own
// wording in the message and the response body.
//
// By the time an error ends the message OpenCode has already retried it (up to 5 times, honouring
// retry-after), so a provider class here means "this model is not answering now": the next model
// of the chain should get the task. A context-length error is different: the conversation, not
// the model, is the problem, so the session is compacted and the same model tried once more.
// Anything else (a bad request, a tool or schema error, an output-length or content-filter stop)
// would fail the same way on every model and ends the task.

// ErrorClass is the kind of a failed model call.
type ErrorClass string

const (
	// ErrRateLimit: too many requests or tokens per time window (HTTP 429, throttling).
	ErrRateLimit ErrorClass = "rate_limit"
	// ErrServer: the provider failed (5xx, internal/server error, gateway errors).
	ErrServer ErrorClass = "server"
	// ErrOverloaded: the provider or model is out of capacity (Anthropic 529, "overloaded",
	// "high demand").
	ErrOverloaded ErrorClass = "overloaded"
	// ErrModelUnavailable: the model does not exist, is not served here, or cannot do what the
	// task needs (404, "model not found", "no endpoints found", "does not support tools").
	ErrModelUnavailable ErrorClass = "model_unavailable"
	// ErrQuota: out of money or quota (402, insufficient_quota, credits, balance).
	ErrQuota ErrorClass = "quota"
	// ErrAuth: the key or token is missing, wrong, expired or not allowed (401/403,
	// ProviderAuthError).
	ErrAuth ErrorClass = "auth"
	// ErrNetwork: the provider could not be reached or the connection broke (ECONNREFUSED,
	// fetch failed, socket hang up, DNS, read/headers timeouts).
	ErrNetwork ErrorClass = "network"
	// ErrTimeout: our own per-attempt inactivity timeout. ClassifyError never returns it: a
	// provider's "timed out" is ErrNetwork.
	ErrTimeout ErrorClass = "timeout"
	// ErrContextLength: the prompt does not fit the model's context window.
	ErrContextLength ErrorClass = "context_length"
	// ErrAborted: the call was aborted (MessageAbortedError), by us or by the user.
	ErrAborted ErrorClass = "aborted"
	// ErrOther: anything else; the same request would fail on any model.
	ErrOther ErrorClass = "other"
)

// Fallback reports whether an error of class c should move the task to the next model of its
// chain: the provider classes, where another model (often another provider) can well succeed.
// It is false for ErrContextLength, which CompactFirst handles, and for ErrAborted and ErrOther.
func (c ErrorClass) Fallback() bool {
	switch c {
	case ErrRateLimit, ErrServer, ErrOverloaded, ErrModelUnavailable, ErrQuota, ErrAuth, ErrNetwork, ErrTimeout:
		return true
	}
	return false
}

// CompactFirst reports whether an error of class c should first compact the session and retry
// once on the same model, and only then go to the next model: true for ErrContextLength alone.
func (c ErrorClass) CompactFirst() bool { return c == ErrContextLength }

// ProviderError is what the classifier reads of a failed model call: OpenCode's error name, and
// from its data the message, the provider's HTTP status (0 when none) and the raw response body.
type ProviderError struct {
	Name         string `json:"name"`
	Message      string `json:"message"`
	StatusCode   int    `json:"statusCode,omitempty"`
	ResponseBody string `json:"responseBody,omitempty"`
}

// errorPattern is a class and the wordings, matched case-insensitively against the message and
// the response body, that give it away.
type errorPattern struct {
	class    ErrorClass
	patterns *patternSet
}

// patternSet is a list of wordings compiled on first use: compiling them all when the module
// starts would delay every plugin start (regular expressions compile slowly inside
// WebAssembly), for errors most sessions never see.
type patternSet struct {
	sources []string
	once    sync.Once
	res     []*regexp.Regexp
}

func (p *patternSet) compiled() []*regexp.Regexp {
	p.once.Do(func() {
		p.res = make([]*regexp.Regexp, len(p.sources))
		for i, re := range p.sources {
			p.res[i] = regexp.MustCompile(`(?im)` + re)
		}
	})
	return p.res
}

func anyOf(res ...string) *patternSet { return &patternSet{sources: res} }

// errorPatterns, in the order they are tried when the status does not decide. Context length
// comes first (a too-long prompt is often a plain 400); quota before rate limit (a 429 that says
// "exceeded your current quota" is not cured by waiting). Wordings are kept specific, so that a
// tool or schema error mentioning "context", "unavailable tool" or "permission denied" stays
// ErrOther. The context list follows OpenCode's own overflow patterns.
var errorPatterns = []errorPattern{
	{ErrContextLength, anyOf(
		`prompt is too long`, `prompt too long`, `input is too long`,
		`request_too_large`, `request entity too large`,
		`context[_ ]length[_ ]exceeded`, `context_window_exceeded`,
		`(?:exceeds?|exceeded) (?:the )?(?:model'?s )?(?:maximum )?context (?:length|window|limit|size)`,
		`maximum context length`, `context length is only`, `context length of only`,
		`greater than the context length`, `longer than the model'?s context length`,
		`exceeds the available context size`, `context window exceeds limit`,
		`input length.*exceeds.*context length`,
		`input token count.*exceeds the maximum`, `exceeds the maximum number of tokens`,
		`maximum prompt length`, `reduce the length of the messages`,
		`exceeded model token limit`, `tokens in request more than max tokens allowed`,
		`exceeds the limit of \d+`,
		`^4(?:00|13)\s*(?:status code)?\s*\(no body\)`,      // Cerebras, Mistral
		"inputs.? tokens \\+ .?max_new_tokens.? must be <=", // Hugging Face TGI: OpenCode misses it
	)},
	{ErrQuota, anyOf(
		`insufficient[_ ]quota`, `exceeded your current quota`, `quota[_ -]exceeded`,
		`plan and billing`, `insufficient[_ ](?:credits|balance|funds)`,
		`credit balance is too low`, `requires more credits`, `out of credits`,
		`payment required`, `free usage exceeded`, `freeusagelimiterror`, `gousagelimiterror`,
		`usage limit reached`,
	)},
	{ErrAuth, anyOf(
		`invalid x-api-key`, `invalid_api_key`, `invalid (?:or missing )?api key`, `incorrect api key`,
		`api key not valid`, `api_key_invalid`, `api key is missing`, `didn't provide an api key`,
		`authentication_error`, `authentication failed`, `invalid authentication`,
		`unauthorized`, `no auth credentials`, `missing authentication`,
		`security token included in the request is invalid`,
		`token has been revoked`, `token (?:has )?expired`,
	)},
	{ErrModelUnavailable, anyOf(
		`model_not_found`, `model_not_supported`, `invalid_model`, `invalid model`,
		`model not found`, `unknown model`, `unsupported model`,
		"model\\b[^.\\n]{0,120}does not exist",
		"model\\b[^.\\n]{0,80}(?:is|are) not (?:supported|available)",
		`is not found for api version`, `no endpoints found`,
		`(?:provided|specified) model identifier`, `does not support tools`,
	)},
	{ErrRateLimit, anyOf(
		`rate[_ -]?limit`, `too many requests`, `too_many_requests`, `throttl`,
		`resource has been exhausted`, `resource[_ ]exhausted`,
		`tokens per min`, `requests per min`, `rate increased too quickly`, `high concurrency`,
	)},
	{ErrOverloaded, anyOf(
		`overloaded`, `high demand`, `(?:at|over|out of|insufficient|no) capacity`,
	)},
	{ErrNetwork, anyOf(
		`econnrefused`, `econnreset`, `etimedout`, `enotfound`, `eai_again`, `ehostunreach`,
		`enetunreach`, `epipe`, `getaddrinfo`, `fetch failed`, `failed to fetch`,
		`socket hang up`, `socket connection was closed`, `other side closed`,
		`connection (?:reset|refused|error|lost|closed)`, `cannot connect to api`,
		`unable to connect`, `network[-_ ]error`, `upstream connect error`, `reset before headers`,
		`\b(?:request|response|connection|network|stream|read|headers) (?:timeout|timed out|time out)\b`,
		`^timeout$`, `^(?:typeerror: )?terminated$`, `decompression failed`,
	)},
	{ErrServer, anyOf(
		`internal server error`, `internal[_ ]error`, `server[_ ]error`, `server had an error`,
		`bad gateway`, `gateway timeout`, `service[_ ]unavailable`, `provider returned error`,
	)},
}

// perWindow is a quota message that is really about a per-minute window (Gemini free tier,
// Cerebras): waiting or another model helps, so it counts as a rate limit.
var perWindow = anyOf(`per ?minute`, `per_minute`)

// ClassifyError tells what a failed model call means for the fallback chain.
//
// OpenCode's own verdicts come first: its error names that carry no HTTP status
// (ContextOverflowError, ProviderAuthError, MessageAbortedError, and the output-length,
// structured-output and content-filter stops). Then the HTTP status where it is unambiguous:
// 429 is a rate limit (a quota when the text says so), 402 a quota, 401/403 auth, 404 a missing
// model, 413 a too-long prompt (a rate limit when the text says tokens per minute), 408 the
// network, 5xx the server (overloaded on 529 or when the text says so). A 400/422 is decided by
// its wording alone, and only for context length, quota, auth or a missing model; any other bad
// request is ErrOther. Without a status (stream errors, connection failures, UnknownError, retry
// messages) every pattern is tried in order. Whatever matches nothing is ErrOther.
func ClassifyError(e ProviderError) ErrorClass {
	switch e.Name {
	case "MessageAbortedError":
		return ErrAborted
	case "ContextOverflowError":
		return ErrContextLength
	case "ProviderAuthError":
		return ErrAuth
	case "MessageOutputLengthError", "StructuredOutputError", "ContentFilterError":
		return ErrOther
	}
	text := e.Message + "\n" + e.ResponseBody
	switch s := e.StatusCode; {
	case s == 429:
		if matches(text, ErrQuota) && !matchAny(text, perWindow) {
			return ErrQuota
		}
		return ErrRateLimit
	case s == 402:
		return ErrQuota
	case s == 401 || s == 403:
		if matches(text, ErrQuota) {
			return ErrQuota
		}
		return ErrAuth
	case s == 404:
		return ErrModelUnavailable
	case s == 413:
		if matches(text, ErrRateLimit) {
			return ErrRateLimit // Groq: "Request too large ... on tokens per minute (TPM)"
		}
		return ErrContextLength
	case s == 408:
		return ErrNetwork
	case s >= 500:
		if s == 529 || matches(text, ErrOverloaded) {
			return ErrOverloaded
		}
		return ErrServer
	case s >= 400:
		return classifyText(text, ErrContextLength, ErrQuota, ErrAuth, ErrModelUnavailable)
	}
	return classifyText(text)
}

// classifyText is the first class among only (all classes when empty) whose patterns match.
func classifyText(text string, only ...ErrorClass) ErrorClass {
	for _, p := range errorPatterns {
		if len(only) > 0 && !hasClass(only, p.class) {
			continue
		}
		if matchAny(text, p.patterns) {
			return p.class
		}
	}
	return ErrOther
}

func matches(text string, class ErrorClass) bool {
	for _, p := range errorPatterns {
		if p.class == class {
			return matchAny(text, p.patterns)
		}
	}
	return false
}

func matchAny(text string, set *patternSet) bool {
	for _, re := range set.compiled() {
		if re.MatchString(text) {
			return true
		}
	}
	return false
}

func hasClass(list []ErrorClass, c ErrorClass) bool {
	for _, x := range list {
		if x == c {
			return true
		}
	}
	return false
}
