package fxotel_test

import (
	"log"

	"github.com/fxhq/fx"
	fxotel "github.com/fxhq/fx/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

func ExampleInstrument() {
	tp := sdktrace.NewTracerProvider()                                                  // add your exporter: sdktrace.WithBatcher(exp)
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())) // or a periodic reader with an exporter
	app := fx.New()
	// First, before any app.Use: the span then covers every middleware,
	// and c.Context() carries it into handlers.
	if err := fxotel.Instrument(app, fxotel.Config{TracerProvider: tp, MeterProvider: mp}); err != nil {
		log.Fatal(err)
	}
	app.Get("/users/:id", func(c *fx.Ctx) error {
		// Spans started from c.Context() are children of "GET /users/:id".
		return c.JSON(200, map[string]string{"id": c.Param("id")})
	})
}
