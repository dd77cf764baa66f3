package core

// Config holds every limit and switch of the core. Hosts pass it at init; zero fields take the
// defaults below, so an older host that knows fewer fields still gets sane values.
type Config struct {
	// MaxResultChars bounds the result carried inside a notice. A longer result is cut there,
	// with a pointer to asyncagents_output, which always returns it whole.
	MaxResultChars int `json:"maxResultChars,omitempty"`
	// PollIntervalMs is how often running tasks are checked against session.status, to catch a
	// session.idle event that never arrived.
	PollIntervalMs int64 `json:"pollIntervalMs,omitempty"`
	// DefaultBlockTimeoutMs and MaxBlockTimeoutMs bound asyncagents_output(block: true).
	DefaultBlockTimeoutMs int64 `json:"defaultBlockTimeoutMs,omitempty"`
	MaxBlockTimeoutMs     int64 `json:"maxBlockTimeoutMs,omitempty"`
	// Development adds "[hint attached]" to visible notices (NODE_ENV=development).
	Development bool `json:"development,omitempty"`
}

// Defaults.
const (
	defaultMaxResultChars    = 12000
	defaultPollIntervalMs    = 3000
	defaultBlockTimeoutMs    = 120_000
	defaultMaxBlockTimeoutMs = 600_000
	minPollIntervalMs        = 100
)

func (c Config) withDefaults() Config {
	if c.MaxResultChars <= 0 {
		c.MaxResultChars = defaultMaxResultChars
	}
	if c.PollIntervalMs <= 0 {
		c.PollIntervalMs = defaultPollIntervalMs
	}
	if c.PollIntervalMs < minPollIntervalMs {
		c.PollIntervalMs = minPollIntervalMs
	}
	if c.DefaultBlockTimeoutMs <= 0 {
		c.DefaultBlockTimeoutMs = defaultBlockTimeoutMs
	}
	if c.MaxBlockTimeoutMs <= 0 {
		c.MaxBlockTimeoutMs = defaultMaxBlockTimeoutMs
	}
	if c.DefaultBlockTimeoutMs > c.MaxBlockTimeoutMs {
		c.DefaultBlockTimeoutMs = c.MaxBlockTimeoutMs
	}
	return c
}
