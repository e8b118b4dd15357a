package openapi

import (
	"embed"
	"strings"
	"sync"

	"github.com/fxhq/fx"
	json "github.com/goccy/go-json"
)

// assets are the documentation page's files (scripts/fetch-docs-assets.sh
// re-fetches them): Redoc's standalone bundle, MIT-licensed, about 1.1 MB.
//
//go:embed assets/redoc.standalone.js
var assets embed.FS

// Mount registers, on app, GET cfg.Path (default /openapi.json): the
// document of Generate, GET cfg.YAMLPath (default /openapi.yaml): the same
// as YAML (see YAML), and GET cfg.DocsPath (default /docs): a
// documentation page rendering it with Redoc, served from assets embedded
// in this package (cfg.DocsPath+"/redoc.standalone.js"; no CDN, so the page
// works offline). These routes are Hidden: they are not in the document.
//
// The page works under middleware.SecurityHeaders' defaults: it answers
// with its own Content-Security-Policy, which replaces the App-wide one
// on the page's responses only — scripts, styles and requests from the
// page's origin, plus inline script and styles carrying a nonce drawn per
// response; no 'unsafe-inline', nothing from another origin, no framing
// (docs/openapi.md). Redoc runs with its sanitize option (untrusted
// spec), so markup in descriptions cannot inject script. A policy set by
// middleware after the handler returns would override the page's.
//
// Call Mount before Boot, like any registration. The document is
// generated once, on the first request for it: by then the App has booted
// and its route table, plugin routes included, is immutable, so the
// document is the table being served. Later requests send the same bytes
// (no allocation beyond fasthttp's copy). A failure to encode (a
// Response.Example that go-json cannot encode) is answered 500
// FX_INTERNAL_ERROR, and logged, on every request for the document.
//
// The routes run behind the App's middleware (Use), like every route: an
// App-wide Auth guards the documentation too; register it on a Group to
// keep the documentation public.
func Mount(app *fx.App, cfg Config) {
	cfg = cfg.withDefaults()
	var (
		once      sync.Once
		doc, yaml []byte
		err       error
	)
	generate := func(app *fx.App) error {
		once.Do(func() {
			var d map[string]any
			if d, err = Generate(app, cfg); err != nil {
				return
			}
			if doc, err = json.Marshal(d); err != nil {
				return
			}
			// YAML from the JSON values of the encoded document (an
			// Example may be any Go value).
			var values map[string]any
			if err = json.Unmarshal(doc, &values); err == nil {
				yaml, err = YAML(values)
			}
		})
		return err
	}
	hidden := fx.RouteDoc{Hidden: true}
	app.Route(fx.Route{Method: "GET", Path: cfg.Path, Doc: hidden, Handler: func(c *fx.Ctx) error {
		if err := generate(c.App()); err != nil {
			return err
		}
		return c.Send(200, "application/json", doc)
	}})
	if cfg.YAMLPath != "-" {
		app.Route(fx.Route{Method: "GET", Path: cfg.YAMLPath, Doc: hidden, Handler: func(c *fx.Ctx) error {
			if err := generate(c.App()); err != nil {
				return err
			}
			return c.Send(200, "application/yaml", yaml)
		}})
	}
	if cfg.DocsPath == "-" {
		return
	}
	app.Route(fx.Route{Method: "GET", Path: cfg.DocsPath, Doc: hidden, Handler: newDocsPage(cfg).serve})
	js, _ := assets.ReadFile("assets/redoc.standalone.js")
	app.Route(fx.Route{Method: "GET", Path: strings.TrimSuffix(cfg.DocsPath, "/") + "/redoc.standalone.js", Doc: hidden,
		Handler: func(c *fx.Ctx) error {
			c.SetHeader("Cache-Control", "public, max-age=86400")
			return c.Send(200, "text/javascript; charset=utf-8", js)
		}})
}
