// Package jsonr reads JSON the way encoding/json.Unmarshal does, for the core's hand-written
// decoders of its hottest inputs (a step's request envelope, the OpenCode events of a worker's
// stream, a session's messages): a decoder reads the fields it keeps and skips the rest,
// validating what it skips, without the reflection, the validating pre-pass and the per-byte
// state machine of encoding/json, which took 41% of the core's time under Bun's engine.
//
// A read ends OK (the value is what encoding/json gives), Bad (encoding/json returns an error:
// malformed JSON, or a value of the wrong type) or Unsure (a case the reader does not judge: a
// key matching a field only case-insensitively, an escaped or non-ASCII key, a deep nesting),
// where the caller decodes with encoding/json instead. It is a leaf: it imports only the
// standard library.
package jsonr
