// Package ocserve drives a real `opencode serve` for end-to-end tests: an
// isolated HOME and git project, the mock model provider, the plugin under
// test, and a small typed client for the HTTP API and its /event stream.
//
//	m := mockmodel.Start(t, mockmodel.Text("hi"))
//	s := ocserve.Start(t, ocserve.Options{ModelURL: m.URL(),
//		Plugins: []string{"file://" + abs("dist/asyncagents.js")}})
//	rec := s.Record(t)                       // every /event frame from now on
//	id, _ := s.CreateSession(ctx, "")
//	_ = s.PromptAsync(ctx, id, "", "hello")
//	_ = s.WaitIdle(ctx, id)
//	msgs, _ := s.Messages(ctx, id)           // msgs[1].Text() == "hi"
//
// Start is bounded (StartTimeout) and t.Cleanup stops the server (SIGTERM,
// then SIGKILL after StopGrace) and prints its logs when the test failed.
// Every API call has its own RequestTimeout on top of the caller's context.
//
// The behaviours of OpenCode 1.18.33 that the plugin relies on are pinned by
// this package's tests: event shapes (events_test.go), model errors and
// retries (errors_test.go), busy-session prompts, noReply and synthetic
// parts (queue_test.go). TestFacts re-measures timings on demand.
package ocserve
