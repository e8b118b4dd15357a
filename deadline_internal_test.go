package fx

import (
	"net"
	"testing"
	"time"
)

// BenchmarkDeadlineMoves is fasthttp's three deadline moves per keep-alive
// request (idle, read, write) on a socket directly and through
// deadlineConn (deadline.go), which arms only moves to an earlier time.
func BenchmarkDeadlineMoves(b *testing.B) {
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
	for _, bc := range []struct {
		name string
		c    net.Conn
	}{{"socket", srv}, {"deadlineConn", newDeadlineConn(srv)}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				_ = bc.c.SetReadDeadline(time.Now().Add(DefaultIdleTimeout))
				_ = bc.c.SetReadDeadline(time.Now().Add(DefaultReadTimeout))
				_ = bc.c.SetWriteDeadline(time.Now().Add(DefaultWriteTimeout))
			}
		})
	}
}
