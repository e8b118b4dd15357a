package redistest

import (
	"testing"
	"time"
)

// TestServerLifecycle drives one server through every state the Redis
// tests use and checks, over the wire, that it answers exactly when it
// should.
func TestServerLifecycle(t *testing.T) {
	s := Start(t)
	if err := ping(s.Addr); err != nil {
		t.Fatalf("after Start: %v", err)
	}
	s.Pause()
	// a paused server accepts (the kernel does) and never answers: a
	// short wait shows it
	if err := pingWithin(s.Addr, 200*time.Millisecond); err == nil {
		t.Fatal("a paused server answered PING")
	}
	s.Resume()
	if err := ping(s.Addr); err != nil {
		t.Fatalf("after Resume: %v", err)
	}
	s.Stop()
	s.Stop() // idempotent
	if err := ping(s.Addr); err == nil {
		t.Fatal("a stopped server answered PING")
	}
	s.Restart()
	if err := ping(s.Addr); err != nil {
		t.Fatalf("after Restart: %v", err)
	}
}
