// Package kittest holds the helpers that the tests of fx's own packages
// share (the core, the kit, the nested modules); only fx's tests import
// it, never an example (a user who copies one could not). Each concern
// has its file:
//
//   - envelope.go: CheckEnvelope, the wire envelope of a response checked
//     through fxtest.CheckEnvelope and decoded;
//   - bench.go: RequestCtx, a request to call an App's handler with
//     directly, and the benchmark loops over it (Bench, BenchCtx,
//     BenchEach, BenchPost, BenchParallel);
//   - logs.go: LogBuffer, a slog handler's output read while the App
//     writes, and LogRecords, its JSON records;
//   - wait.go: Within and Eventually, bounded waits for what another
//     goroutine delivers or reaches;
//   - heap.go: SettledHeap, the live heap once the pools are emptied;
//   - printtb.go, recordtb.go: PrintTB, a test's t in a runnable example,
//     and RecordTB, one whose failures a test reads (an assertion shown to
//     fail);
//   - grammar.go: GrammarChecks, how often a route checks a body's JSON
//     grammar;
//   - parallel.go: WaitingParallel, more parallel tests at once for a
//     package whose tests mostly wait (called from TestMain).
//
// The JWT fixtures live in jwtkit, so that kittest links no JWT library
// and nested modules can use it; the deploy tests' processes are
// package internal/deploytest's, a real redis-server internal/redistest's.
package kittest
