package openapi

import (
	"crypto/rand"
	"encoding/base64"
	"html"
	"strings"

	"github.com/fxhq/fx"
	json "github.com/goccy/go-json"
)

// The documentation page (Mount's cfg.DocsPath) renders the document with
// Redoc. It must work under the App's own defaults: middleware
// SecurityHeaders sends "default-src 'none'" on every response, which
// blocks the page's script and styles (a blank page), and a plain
// "default-src 'self'" still blocks the style elements Redoc's
// styled-components insert at run time (Redoc then throws). So the page
// answers with its own Content-Security-Policy, replacing the App-wide
// one on that response only (handlers run after SecurityHeaders, which
// sets its headers before calling next): scripts and styles from the
// page's origin plus those carrying a nonce drawn for that response. The
// page's one inline script carries it and hands it to Redoc (its nonce
// option), which sets it on every style element it inserts. No
// 'unsafe-inline', no 'unsafe-eval', nothing from another origin; Redoc
// runs with sanitize on (its untrusted-spec mode), so descriptions in the
// document cannot inject markup.

// docsPolicy is the page's Content-Security-Policy for nonce.
func docsPolicy(nonce string) string {
	n := "'nonce-" + nonce + "'"
	return "default-src 'none'; script-src 'self' " + n + "; style-src 'self' " + n + bundleStyleHashes +
		"; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:" +
		"; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}

// bundleStyleHashes allow the style element Redoc's bundle inserts while
// it loads, before the page can hand it the nonce: the perfect-scrollbar
// rules of Redoc 2.5.4 (assets/REDOC_VERSION), first inserted empty. A
// new bundle may need new hashes: the page test in openapi/conformance
// (headless Chromium) fails on any style or script the policy blocks.
const bundleStyleHashes = " 'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=' 'sha256-QMIg+bpjm3JdElJ388KYke01izlUW0UoNOeKjpMxdgc='"

// docsPage is the page's HTML, split where the nonce goes.
type docsPage struct {
	parts [3]string
}

func newDocsPage(cfg Config) *docsPage {
	specURL, _ := json.Marshal(cfg.Path) // a JS string; <, > and & escaped, so it cannot end the script
	script := html.EscapeString(strings.TrimSuffix(cfg.DocsPath, "/") + "/redoc.standalone.js")
	return &docsPage{parts: [3]string{
		`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>` + html.EscapeString(cfg.Title) + `</title>
<style nonce="`, `">body{margin:0}</style>
</head>
<body>
<div id="redoc"></div>
<script src="` + script + `"></script>
<script nonce="`, `">Redoc.init(` + string(specURL) + `, {sanitize: true, nonce: document.currentScript.nonce}, document.getElementById("redoc"));</script>
</body>
</html>
`}}
}

// serve answers the page with a fresh nonce and its policy. It is not
// cached: a nonce is good for one response. Cost: 16 random bytes and
// one copy of the page (about 600 bytes).
func (p *docsPage) serve(c *fx.Ctx) error {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	nonce := base64.StdEncoding.EncodeToString(b[:])
	c.SetHeader("Content-Security-Policy", docsPolicy(nonce))
	c.SetHeader("Cache-Control", "no-store")
	return c.Send(200, "text/html; charset=utf-8", []byte(p.parts[0]+nonce+p.parts[1]+nonce+p.parts[2]))
}
