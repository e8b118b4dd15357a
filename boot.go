package fx

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/valyala/fasthttp"
)

// Boot runs plugin Setup functions in dependency order, builds the route
// table and reports every configuration error, joined with errors.Join
// (each an *Error: FX_ROUTE_HANDLER_REQUIRED, FX_PLUGIN_MISSING_DEPENDENCY,
// FX_PLUGIN_DEPENDENCY_CYCLE, ...), or the error of a failing Setup.
//
// Boot is idempotent and safe for concurrent use: the first call does the
// work, every call returns its result. Listen, Serve, Handler and Test boot
// implicitly. After Boot, the App's registrations are closed.
func (a *App) Boot() error {
	if a.booted.Load() {
		return a.bootErr
	}
	a.bootMu.Lock()
	defer a.bootMu.Unlock()
	if a.booted.Load() {
		return a.bootErr
	}
	a.booting.Store(true)
	a.bootErr = a.boot()
	a.booting.Store(false)
	if a.bootErr != nil {
		a.logger.LogAttrs(context.Background(), slog.LevelError, "fx: boot failed", slog.Any("error", a.bootErr))
	}
	a.booted.Store(true)
	return a.bootErr
}

func (a *App) boot() error {
	errs := a.setupPlugins()
	errs = append(errs, a.configErrors()...) // invalid Config entries (TrustedProxies)
	if a.cfg.TLS != nil {
		var err error
		if a.tls, err = tlsServerConfig(a.cfg.TLS); err != nil { // Config.TLS (listen_tls.go)
			errs = append(errs, err)
		}
	}
	z, zerrs := newCompressor(a.cfg.Compression) // Config.Compression (compress.go)
	errs = append(errs, zerrs...)
	if len(zerrs) == 0 {
		a.zip = z // nil without Compression; finish applies it
	}

	// Close registrations and take what they hold.
	a.regMu.Lock()
	a.sealed = true // registering from now on panics
	specs, mws, hook := a.specs, a.mws, a.hook
	a.regMu.Unlock()

	errs = append(errs, nilMiddleware("App.Use", mws)...)
	r, static, rerrs := a.buildRouter(specs, mws)
	errs = append(errs, rerrs...)
	a.hook = hook
	a.notFoundRoute = &route{chain: mws, handler: notFoundHandler}
	warmUpEncoders()

	if len(errs) > 0 {
		err := errors.Join(errs...)
		a.handler = a.failedBootHandler(err)
		return err
	}
	a.handler = a.dispatch(static, r.Handler, r.NotFound) // request.go
	return nil
}

// setupPlugins runs every plugin's Setup in dependency order. A Setup may
// register more plugins: they are ordered together with all the others and
// set up in further rounds, until no new plugin appears.
func (a *App) setupPlugins() []error {
	ran := map[string]bool{}
	for {
		a.regMu.Lock()
		plugins := append([]Plugin(nil), a.plugins...)
		a.regMu.Unlock()
		if len(ran) == len(plugins) {
			return nil
		}
		order, errs := orderPlugins(plugins)
		if len(errs) > 0 {
			return errs
		}
		for _, p := range order {
			if ran[p.Name] {
				continue
			}
			ran[p.Name] = true
			if err := runSetup(a, p); err != nil {
				return []error{err}
			}
		}
	}
}

// Handler boots the App (see Boot) and returns its fasthttp handler, for
// use with a fasthttp.Server of your own. If Boot failed, the handler
// answers every request with the 500 envelope of the boot error.
//
// Called while Boot is running (from a plugin's Setup, directly or through
// Server), it cannot wait for Boot without deadlocking; it then returns a
// handler that waits for Boot on its first request.
func (a *App) Handler() fasthttp.RequestHandler {
	if !a.booted.Load() && a.booting.Load() {
		return func(rc *fasthttp.RequestCtx) {
			_ = a.Boot() // as below
			a.handler(rc)
		}
	}
	_ = a.Boot() // reported by Boot's log and by the handler itself
	return a.handler
}

// failedBootHandler answers every request with the envelope of the first
// *Error in err (production rules apply: FX_INTERNAL_ERROR says only
// "Internal server error"), always with status 500.
func (a *App) failedBootHandler(err error) fasthttp.RequestHandler {
	_, code, msg, details := a.resolve(err, err)
	body := AppendEnvelope(nil, &Error{Code: code, Message: msg, Details: details})
	return func(rc *fasthttp.RequestCtx) {
		a.startClock(rc)
		rc.Response.ResetBody()
		rc.SetStatusCode(fasthttp.StatusInternalServerError)
		rc.Response.Header.SetContentTypeBytes(contentTypeJSON)
		rc.Response.SetBodyRaw(body)
		a.finish(rc, nil, unserved, code)
	}
}

// warmUpEncoders makes go-json compile its encoders for the shapes error
// details usually have, so the first failing request does not pay for it.
func warmUpEncoders() {
	samples := []any{
		map[string]any{"issues": []ValidationIssue{{Location: "body", Path: []string{"a"}, Message: "m"}}},
		map[string]any{"a": []any{"b", 1.5, true, nil, map[string]any{}}},
		map[string]string{"a": "b"},
		[]string{"a"},
	}
	for _, s := range samples {
		_, _ = appendDetails(nil, s)
	}
}

// configError is a configuration mistake Boot reports (other than a nil
// route handler, which has its own code, FX_ROUTE_HANDLER_REQUIRED): an
// FX_INTERNAL_ERROR whose message is what, a colon, and the problem. what
// names the misconfigured thing as the application wrote it: `App.Use`,
// `Group "/x"`, `Route GET /a` (routeWhat), `Plugin "auth"`. Every boot
// error is worded by this one helper, so they all read the same way.
func configError(what, format string, args ...any) *Error {
	return catalogError(codeInternalError, what+": "+fmt.Sprintf(format, args...))
}

// routeWhat names a route in a configuration error: "Route GET /a", or,
// when the method or path is empty or holds white space, both quoted
// (`Route "G T" "/a"`), so that the message shows what was registered.
func routeWhat(method, path string) string {
	if method == "" || path == "" || strings.ContainsAny(method+path, " \t\r\n") {
		return fmt.Sprintf("Route %q %q", method, path)
	}
	return "Route " + method + " " + path
}

// nilMiddleware reports each nil entry of mws, which would otherwise panic
// on every request that reaches it, as a configuration error for Boot
// naming owner and the position. It is the one check for App.Use, Group
// and Route.Middleware.
func nilMiddleware(owner string, mws []Middleware) []error {
	var errs []error
	for i, mw := range mws {
		if mw == nil {
			errs = append(errs, configError(owner, "nil middleware at position %d", i))
		}
	}
	return errs
}
