package task

// Tokens is what a task's child sessions spent, summed over their assistant messages as
// OpenCode counts them (a cache read or write is counted apart from the input).
type Tokens struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	Reasoning  int64 `json:"reasoning"`
	CacheRead  int64 `json:"cacheRead"`
	CacheWrite int64 `json:"cacheWrite"`
}

// Add adds o to t.
func (t *Tokens) Add(o Tokens) {
	t.Input += o.Input
	t.Output += o.Output
	t.Reasoning += o.Reasoning
	t.CacheRead += o.CacheRead
	t.CacheWrite += o.CacheWrite
}

// Sub takes o from t.
func (t *Tokens) Sub(o Tokens) {
	t.Input -= o.Input
	t.Output -= o.Output
	t.Reasoning -= o.Reasoning
	t.CacheRead -= o.CacheRead
	t.CacheWrite -= o.CacheWrite
}

// Total is every token counted, input, output, reasoning and cache alike.
func (t Tokens) Total() int64 {
	return t.Input + t.Output + t.Reasoning + t.CacheRead + t.CacheWrite
}

// Usage is a task's spending: its tokens and its cost in the provider's currency as OpenCode
// prices it (0 when the model has no price). A task with nothing counted yet has no tokens.
func (t *Task) Usage() (Tokens, float64) {
	if t.Tokens == nil {
		return Tokens{}, t.Cost
	}
	return *t.Tokens, t.Cost
}

// AddUsage adds what one message spent (or takes it away, with a message's earlier count).
func (t *Task) AddUsage(tok Tokens, cost float64, sub bool) {
	if t.Tokens == nil {
		t.Tokens = &Tokens{}
	}
	if sub {
		t.Tokens.Sub(tok)
		t.Cost -= cost
		return
	}
	t.Tokens.Add(tok)
	t.Cost += cost
}
