package conn

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestListenerRefusesThroughTheHooks: a connection beyond Config.Limit is
// answered by Config.Refuse, whatever it writes (the layer holds no
// response of its own), after the layer read the request head, and
// Config.Observe sees that head and the refused connection; without
// Refuse the connection is closed with no response and nothing is
// observed.
func TestListenerRefusesThroughTheHooks(t *testing.T) {
	t.Parallel()
	const answer = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbusy"
	const head = "GET /over HTTP/1.1\r\nHost: a\r\n\r\n"
	for _, tc := range []struct {
		name   string
		refuse func(net.Conn) error
		want   string
	}{
		{"Refuse", func(c net.Conn) error { _, err := io.WriteString(c, answer); return err }, answer},
		{"no Refuse", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var seen []string
			observed := make(chan struct{}, 1)
			raw, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ln := NewListener(raw, Config{Limit: 1, Refuse: tc.refuse, Observe: func(c net.Conn, h []byte, start time.Time) {
				mu.Lock()
				seen = append(seen, string(h))
				mu.Unlock()
				if c == nil || start.IsZero() {
					t.Error("Observe got no connection or no start")
				}
				observed <- struct{}{}
			}})
			defer ln.Close()
			go func() {
				held, err := ln.Accept() // the one within the limit, held open
				if err != nil {
					return
				}
				defer held.Close()
				_, _ = ln.Accept() // refuses the next ones until the listener closes
			}()
			first, err := net.Dial("tcp", raw.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer first.Close()
			time.Sleep(50 * time.Millisecond) // first is accepted: the limit is reached
			over, err := net.Dial("tcp", raw.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer over.Close()
			_ = over.SetDeadline(time.Now().Add(5 * time.Second)) // a bound
			if _, err := io.WriteString(over, head); err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(over)
			if string(got) != tc.want {
				t.Fatalf("refused connection read %q, want %q", got, tc.want)
			}
			if tc.refuse == nil {
				return
			}
			select {
			case <-observed:
			case <-time.After(5 * time.Second):
				t.Fatal("the refusal was not observed")
			}
			mu.Lock()
			defer mu.Unlock()
			if len(seen) != 1 || !strings.HasPrefix(seen[0], head) {
				t.Fatalf("Observe saw %q, want the head %q", seen, head)
			}
		})
	}
}
