package b21

import (
"github.com/fxhq/fx"
"github.com/fxhq/fx/middleware"
"github.com/prometheus/client_golang/prometheus"
)

//line docs/observability.md:85
import (
fxprom "github.com/fxhq/fx/prometheus"
)

//line docs/observability.md (fragment marker):1
var app = fx.New()
var scraperKeys *middleware.APIKeys
var reg *prometheus.Registry



func _() {
//line docs/observability.md:86

//line docs/observability.md:87
scrapeAuth := middleware.Auth(middleware.AuthConfig{APIKeys: scraperKeys})
//line docs/observability.md:88
fxprom.Register(app, fxprom.Config{
//line docs/observability.md:89
	Registry:   reg,                         // nil: prometheus.DefaultRegisterer
//line docs/observability.md:90
	Path:       "/metrics",                  // the default
//line docs/observability.md:91
	Middleware: []fx.Middleware{scrapeAuth}, // optional: guards the route
//line docs/observability.md:92
})
	_ = scrapeAuth
}
