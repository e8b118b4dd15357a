package fxotel_test

import (
	"context"
	"log/slog"
	"net"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
	fxotel "github.com/fxhq/fx/otel"
	"github.com/valyala/fasthttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// The benchmarks measure what instrumentation adds to a bare route
// (c.String), served through app.Handler on one reused RequestCtx whose
// user values are cleared between requests, as fasthttp's server does:
//
//	go test -run '^$' -bench . -benchmem
//
// BenchmarkBare: no instrumentation. BenchmarkNoop: the no-op tracer and
// meter providers. BenchmarkSDK: the SDK, sampling every span into a
// processor that drops it, and a manual metric reader (never collected).
// BenchmarkSDKTraceparent: the same with an incoming traceparent.

func benchApp(b *testing.B, cfg *fxotel.Config) fasthttp.RequestHandler {
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	if cfg != nil {
		if err := fxotel.Instrument(app, *cfg); err != nil {
			b.Fatal(err)
		}
	}
	app.Get("/hello", func(c *fx.Ctx) error { return c.String(200, "hello") })
	if err := app.Boot(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = app.Shutdown() })
	return app.Handler()
}

func runBench(b *testing.B, h fasthttp.RequestHandler, traceparent string) {
	rc := kittest.RequestCtx("GET", "/hello")
	rc.SetRemoteAddr(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5000})
	rc.Request.Header.SetHost("example.com")
	rc.Request.Header.SetUserAgent("bench/1")
	if traceparent != "" {
		rc.Request.Header.Set("traceparent", traceparent)
	}
	kittest.BenchCtx(b, h, rc, 200)
}

type dropProcessor struct{}

func (dropProcessor) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (dropProcessor) OnEnd(sdktrace.ReadOnlySpan)                     {}
func (dropProcessor) Shutdown(context.Context) error                  { return nil }
func (dropProcessor) ForceFlush(context.Context) error                { return nil }

func sdkConfig() *fxotel.Config {
	return &fxotel.Config{
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(dropProcessor{})),
		MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())),
	}
}

func BenchmarkBare(b *testing.B) { runBench(b, benchApp(b, nil), "") }

func BenchmarkNoop(b *testing.B) {
	runBench(b, benchApp(b, &fxotel.Config{
		TracerProvider: tracenoop.NewTracerProvider(),
		MeterProvider:  metricnoop.NewMeterProvider(),
	}), "")
}

func BenchmarkSDK(b *testing.B) { runBench(b, benchApp(b, sdkConfig()), "") }

func BenchmarkSDKTraceparent(b *testing.B) {
	runBench(b, benchApp(b, sdkConfig()), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
}
