package b20

import (
"github.com/fxhq/fx"
"github.com/prometheus/client_golang/prometheus"
)


//line docs/observability.md (fragment marker):1
var app = fx.New()
var metrics struct{ Failures *prometheus.CounterVec }



func _() {
//line docs/observability.md:21
app.Use(func(c *fx.Ctx, next fx.Next) error {
//line docs/observability.md:22
	err := next()
//line docs/observability.md:23
	if status, code := fx.Resolve(err); status >= 500 {
//line docs/observability.md:24
		metrics.Failures.WithLabelValues(code).Inc()
//line docs/observability.md:25
	}
//line docs/observability.md:26
	return err
//line docs/observability.md:27
})
}
