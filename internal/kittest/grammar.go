package kittest

import (
	"log/slog"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/validate"
	"github.com/fxhq/fx/validate/validatetest"
)

// unchecked is a schema's Decoder and LimitedDecoder without its
// ChecksGrammar.
type unchecked struct{ validate.LimitedDecoder }

// Unchecked returns s without its ChecksGrammar (validate.GrammarChecker):
// on a route, fx checks the grammar of a body (validate.CheckJSON)
// before s reads it.
func Unchecked(s validate.LimitedDecoder) validate.Schema { return unchecked{s} }

// GrammarChecks measures how often the grammar of body is checked on a
// route whose Body is s: it serves body (a POST of JSON, on an App of
// cfg, logs discarded) through s as it is and through Unchecked(s), each
// after a warm-up, and returns the bytes each request allocated and what
// one validate.CheckJSON of body allocates. On a body of many keys the
// check's key set is most of it: a schema checking the grammar once
// itself costs alone ≈ one check (plus its own values), and behind ≈
// alone + one check.
func GrammarChecks(t testing.TB, cfg fx.Config, s validate.LimitedDecoder, body []byte) (alone, behind, check uint64) {
	t.Helper()
	check = validatetest.Allocated(func() { _ = validate.CheckJSON(body) })
	var alloc [2]uint64
	for i, schema := range []validate.Schema{s, Unchecked(s)} {
		if cfg.Logger == nil {
			cfg.Logger = slog.New(slog.DiscardHandler)
		}
		app := fx.New(cfg)
		app.Route(fx.Route{Method: "POST", Path: "/", Body: schema, Handler: func(c *fx.Ctx) error { return c.NoContent(204) }})
		h := app.Handler()
		for range 2 { // the first warms the pools and the plans
			rc := RequestCtx("POST", "/")
			rc.Request.Header.SetContentType("application/json")
			rc.Request.SetBody(body)
			alloc[i] = validatetest.Allocated(func() { h(rc) })
		}
	}
	return alloc[0], alloc[1], check
}
