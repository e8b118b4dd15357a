package b23

import (
"github.com/fxhq/fx"
"github.com/fxhq/fx/otel"
"go.opentelemetry.io/otel/metric"
"go.opentelemetry.io/otel/trace"
"log"
)


//line docs/observability.md (fragment marker):1
var app = fx.New()
var tp trace.TracerProvider
var mp metric.MeterProvider



func _() {
//line docs/observability.md:168
if err := fxotel.Instrument(app, fxotel.Config{TracerProvider: tp, MeterProvider: mp}); err != nil {
//line docs/observability.md:169
	log.Fatal(err) // a nil app, or a meter that cannot create the histogram
//line docs/observability.md:170
}
}
