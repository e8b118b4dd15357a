package fxprom_test

import (
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/fxhq/fx"
	fxprom "github.com/fxhq/fx/prometheus"
	"github.com/prometheus/client_golang/prometheus"
)

// The benchmarks serve GET /hello, a bare route answering a constant text
// body, through the App's own fasthttp server (Server().ServeConn) on an
// in-memory connection that carries b.N pipelined requests: fasthttp's
// real loop, which also takes each request's time (the start of
// Ctx.Duration), without a socket. BenchmarkBaseline is the App without
// metrics, to subtract. Run them with
//
//	go test -run '^$' -bench . -benchmem

func BenchmarkBaseline(b *testing.B) { benchConn(b, benchApp(nil)) }

// BenchmarkObserve: the same with Register (the series of the route seen
// once before the timer starts: the steady state).
// It checks afterwards that every request was counted and timed.
func BenchmarkObserve(b *testing.B) {
	reg := prometheus.NewRegistry()
	n := benchConn(b, benchApp(reg))
	mfs, err := reg.Gather()
	if err != nil {
		b.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == fxprom.DurationName {
			if got := mf.GetMetric()[0].GetHistogram().GetSampleCount(); got != uint64(n) {
				b.Fatalf("%d requests timed, want %d", got, n)
			}
			return
		}
	}
	b.Fatal("no histogram")
}

// BenchmarkWebSocketBaseline is the App of BenchmarkObserveWebSocket
// without metrics: its route answers as an upgraded request does when its
// connection ends (a 101 with the connection's figures as log attributes).
func BenchmarkWebSocketBaseline(b *testing.B) { benchConn(b, benchWSApp(nil)) }

// BenchmarkObserveWebSocket: the same with Register, which adds each
// request's figures to the WebSocket counters (the cost of observing one
// WebSocket connection at its end, against BenchmarkWebSocketBaseline).
// It checks afterwards that every connection's close was counted.
func BenchmarkObserveWebSocket(b *testing.B) {
	reg := prometheus.NewRegistry()
	n := benchConn(b, benchWSApp(reg))
	if got := closesCounted(b, reg); int(got) != n {
		b.Fatalf("%v closes counted, want %d", got, n)
	}
}

// closesCounted is the value of the close counter's one series in reg.
func closesCounted(b *testing.B, reg *prometheus.Registry) float64 {
	mfs, err := reg.Gather()
	if err != nil {
		b.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == fxprom.WebSocketClosesName {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	b.Fatal("no close counter")
	return 0
}

// benchWSApp is benchApp with a /hello that answers like an upgraded
// request at its connection's end.
func benchWSApp(reg *prometheus.Registry) *fx.App {
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	app.Get("/hello", upgradedEnd(""))
	if reg != nil {
		fxprom.Register(app, fxprom.Config{Registry: reg})
	}
	return app
}

// benchApp is the benchmarks' App, with the metrics registered on reg
// unless it is nil.
func benchApp(reg *prometheus.Registry) *fx.App {
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	app.Get("/hello", func(c *fx.Ctx) error { return c.String(200, "hello") })
	if reg != nil {
		fxprom.Register(app, fxprom.Config{Registry: reg})
	}
	return app
}

const benchRequest = "GET /hello HTTP/1.1\r\nHost: bench\r\n\r\n"

// benchConn serves 10 requests, then b.N timed ones, and returns how many
// were served in all.
func benchConn(b *testing.B, app *fx.App) int {
	if err := app.Boot(); err != nil {
		b.Fatal(err)
	}
	srv := app.Server()
	warm := &pipeConn{left: 10 * len(benchRequest)}
	if err := srv.ServeConn(warm); err != nil {
		b.Fatal(err)
	}
	if warm.written == 0 {
		b.Fatal("no response written")
	}
	b.ReportAllocs()
	b.ResetTimer()
	conn := &pipeConn{left: b.N * len(benchRequest)}
	if err := srv.ServeConn(conn); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	return 10 + b.N
}

// pipeConn is a net.Conn whose reads yield benchRequest until left bytes
// have been read, then io.EOF; writes are counted and dropped.
type pipeConn struct {
	off, left int
	written   int
}

func (c *pipeConn) Read(p []byte) (int, error) {
	if c.left == 0 {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && c.left > 0 {
		k := copy(p[n:min(len(p), n+c.left)], benchRequest[c.off:])
		n += k
		c.left -= k
		c.off = (c.off + k) % len(benchRequest)
	}
	return n, nil
}

func (c *pipeConn) Write(p []byte) (int, error) { c.written += len(p); return len(p), nil }

func (c *pipeConn) Close() error                     { return nil }
func (c *pipeConn) LocalAddr() net.Addr              { return benchAddr }
func (c *pipeConn) RemoteAddr() net.Addr             { return benchAddr }
func (c *pipeConn) SetDeadline(time.Time) error      { return nil }
func (c *pipeConn) SetReadDeadline(time.Time) error  { return nil }
func (c *pipeConn) SetWriteDeadline(time.Time) error { return nil }

var benchAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
