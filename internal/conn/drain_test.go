package conn

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestDrainCloseEndsCleanly: a keep-alive connection closed once its
// listener is closed (a shutdown, a hand-off), while the client's next
// request is already in the socket unread, ends with a clean end of
// stream for the client, not a reset; the request that raced the close is
// not handed to the server (Read reports the end of stream); WaitDrained
// returns once the client has closed its side. Before the draining close,
// the client read "connection reset by peer".
func TestDrainCloseEndsCleanly(t *testing.T) {
	t.Parallel()
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := NewListener(raw, Config{Limit: 8})
	cc, err := net.Dial("tcp", raw.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	sc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(cc, "GET /next HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the request is in the server's socket, unread

	ln.Close() // the shutdown begins
	if err := sc.Close(); err != nil {
		t.Fatal(err)
	}
	cc.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := cc.Read(make([]byte, 64))
	if errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("the client's connection was reset: %v", err)
	}
	if n != 0 || err != io.EOF {
		t.Fatalf("client read %d bytes, %v; want a clean end of stream", n, err)
	}
	cc.Close() // as a client does on end of stream
	if n, err := sc.Read(make([]byte, 64)); n != 0 || err == nil {
		t.Errorf("the serving side read %d bytes, %v after Close; want nothing", n, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), lingerTimeout/2)
	defer cancel()
	if err := WaitDrained(ctx, ln); err != nil {
		t.Errorf("WaitDrained after the client closed: %v", err)
	}
	if open := ln.(*limitListener).open.Load(); open != 0 {
		t.Errorf("%d connections still counted open", open)
	}
}

// TestDrainCountWaitWhileClosesStart: a shutdown may wait for the
// draining closes while new ones start (fasthttp closes idle connections
// as it goes); the count allows it, where a sync.WaitGroup panics ("reused
// before previous Wait has returned"), and a wait that gives up leaves no
// goroutine.
func TestDrainCountWaitWhileClosesStart(t *testing.T) {
	var d drainCount
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for range 2000 {
				d.add()
				d.done()
			}
		}()
		go func() {
			defer wg.Done()
			for range 2000 {
				select {
				case <-d.idle():
				case <-time.After(time.Second):
					t.Error("idle never signalled while closes came and went")
					return
				}
			}
		}()
	}
	wg.Wait()
	select {
	case <-d.idle():
	default:
		t.Fatal("no close in progress, yet the count is not idle")
	}
	d.add()
	select {
	case <-d.idle():
		t.Fatal("idle while a close is in progress")
	default:
	}
	d.done()
}
