package conn

import (
	"testing"
	"unsafe"
)

// encoderFrame is a frame larger than go-json's encoder loop (3,136 bytes),
// the deepest frame of fx's response path.
const encoderFrame = 3584

// TestFirstReadReservesStack: after a served connection's first read, its
// goroutine's stack holds a frame larger than go-json's encoder loop
// without being copied again, so the request path does not grow it (and
// decode every frame's tables) deep in the response. The reader is a fresh
// goroutine, on the runtime's smallest stack, as a new fasthttp worker is.
// Without reserveStack the probe's frame moves the stack.
func TestFirstReadReservesStack(t *testing.T) {
	cli, srv := tcpPair(t)
	limits := Timeouts{Read: defaultRead, Write: defaultWrite, Idle: defaultIdle}.limits()
	tc := newTimeoutConn(srv, &limits, true)
	defer tc.done()
	c := &limitConn{Conn: tc, l: &limitListener{}}
	if _, err := cli.Write([]byte("GET / HTTP/1.1\r\nHost: a\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	type result struct {
		moved bool
		err   error
	}
	done := make(chan result)
	go func() {
		buf := make([]byte, 512)
		_, err := c.Read(buf)
		done <- result{stackMovedBy(), err}
	}()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.moved {
		t.Fatalf("a %d-byte frame after the first read grew the reader's stack", encoderFrame)
	}
}

// TestStackProbeSeesGrowth: the probe itself reports a copied stack: on a
// fresh goroutine that reserved nothing, the same frame moves it (so the
// test above cannot pass for a probe that never sees a move).
func TestStackProbeSeesGrowth(t *testing.T) {
	done := make(chan bool)
	go func() { done <- stackMovedBy() }()
	if !<-done {
		t.Fatalf("a %d-byte frame on a fresh goroutine did not grow its stack", encoderFrame)
	}
}

// stackMovedBy reports whether calling a function with an encoderFrame
// frame copied the goroutine's stack: the address of a local changes when
// the runtime moves the stack to grow it.
//
//go:noinline
func stackMovedBy() bool {
	var here byte
	before := uintptr(unsafe.Pointer(&here))
	useFrame()
	return uintptr(unsafe.Pointer(&here)) != before
}

//go:noinline
func useFrame() {
	var frame [encoderFrame]byte
	keepFrame(frame[:])
}

// BenchmarkReserveStack is what reserveStack costs a connection: "grown"
// on a goroutine whose stack already holds the frame (a worker reused for
// a new connection): the frame's zeroing alone; "fresh" on a new goroutine
// per connection, as a new worker: the growth from the smallest stack,
// with only the benchmark's short frames to copy; "fresh-none" is the
// goroutine alone. What it saves (the same growth later, under the
// request path's large frames) is a served connection's, measured over
// loopback (docs/performance.md).
//
//	go test -run '^$' -bench ReserveStack ./internal/conn
func BenchmarkReserveStack(b *testing.B) {
	b.Run("grown", func(b *testing.B) {
		reserveStack()
		for b.Loop() {
			reserveStack()
		}
	})
	for _, bc := range []struct {
		name    string
		reserve bool
	}{{"fresh", true}, {"fresh-none", false}} {
		b.Run(bc.name, func(b *testing.B) {
			done := make(chan struct{})
			for b.Loop() {
				go func() {
					if bc.reserve {
						reserveStack()
					}
					done <- struct{}{}
				}()
				<-done
			}
		})
	}
}
