package fx

import (
	"net"
	"testing"
	"time"
)

// instantConn answers Read and Write at once and passes deadlines on to
// the socket it embeds: a connection whose I/O costs nothing, so that a
// benchmark over it measures the deadline work alone.
type instantConn struct{ net.Conn }

func (instantConn) Read(p []byte) (int, error)  { return len(p), nil }
func (instantConn) Write(p []byte) (int, error) { return len(p), nil }

// BenchmarkPhases is the deadline work of one keep-alive request: the
// wait for it, its first byte, its response. "fasthttp" is what fasthttp
// does with its timeouts set (three clock reads, three deadline moves on
// the socket); "timeoutConn" is fx's phases (deadline.go) over the same
// socket; "none" is the I/O calls alone.
//
//	go test -run '^$' -bench Phases .
func BenchmarkPhases(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	cli, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer cli.Close()
	srv, err := ln.Accept()
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	conn := instantConn{srv}
	buf := make([]byte, 64)
	limits := connTimeoutsOf(&Config{ReadTimeout: DefaultReadTimeout, WriteTimeout: DefaultWriteTimeout, IdleTimeout: DefaultIdleTimeout})
	b.Run("none", func(b *testing.B) {
		for b.Loop() {
			_, _ = conn.Read(buf)
			_, _ = conn.Write(buf)
		}
	})
	b.Run("fasthttp", func(b *testing.B) {
		for b.Loop() {
			_ = conn.SetReadDeadline(time.Now().Add(DefaultIdleTimeout))
			_, _ = conn.Read(buf)
			_ = conn.SetReadDeadline(time.Now().Add(DefaultReadTimeout))
			_ = conn.SetWriteDeadline(time.Now().Add(DefaultWriteTimeout))
			_, _ = conn.Write(buf)
		}
	})
	b.Run("timeoutConn", func(b *testing.B) {
		tc := newTimeoutConn(conn, &limits, true)
		for b.Loop() {
			_, _ = tc.Read(buf)
			_, _ = tc.Write(buf)
		}
	})
}
