package bench

import (
	"net"
	"strconv"
	"testing"
	"time"
)

// BenchmarkDeadlineRefresh is the cost fasthttp adds to every keep-alive
// request when its own ReadTimeout, WriteTimeout and IdleTimeout are set
// (the raw-timeouts variant; raw fasthttp and Fiber set none, and fx
// enforces its timeouts per connection phase instead: BenchmarkPhases in
// the root package): the idle deadline before waiting for the next
// request, the read deadline at its first byte, and the write deadline
// before the response, each a time.Now and a runtime timer update
// (internal/poll's setDeadlineImpl). It runs with 1 and 1,000 other
// connections holding an armed deadline, as idle keep-alive connections
// do, to show whether the timer heap's size matters.
func BenchmarkDeadlineRefresh(b *testing.B) {
	for _, n := range []int{1, 1000} {
		b.Run("conns="+strconv.Itoa(n), func(b *testing.B) {
			srv := armedConns(b, n)
			i := 0
			for b.Loop() {
				c := srv[i%n]
				i++
				_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))
				_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
				_ = c.SetWriteDeadline(time.Now().Add(15 * time.Second))
			}
		})
	}
}

// armedConns opens n loopback connections and returns their server ends,
// each with a read deadline armed; they are closed when b ends.
func armedConns(b *testing.B, n int) []net.Conn {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	var srv []net.Conn
	b.Cleanup(func() {
		for _, c := range srv {
			c.Close()
		}
	})
	for range n {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		s, err := ln.Accept()
		if err != nil {
			b.Fatal(err)
		}
		_ = s.SetReadDeadline(time.Now().Add(60 * time.Second))
		srv = append(srv, s)
	}
	return srv
}
