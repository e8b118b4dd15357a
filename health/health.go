// Package health serves health probes: GET /livez and GET /readyz for
// load balancers and orchestrators (Kubernetes probes).
//
//	probes := health.New(health.Config{Timeout: 500 * time.Millisecond})
//	probes.AddReadiness("db", db.PingContext)
//	probes.Register(app) // GET /livez, GET /readyz
//
// The two probes answer different questions:
//
//   - Liveness answers "should this process be restarted?". It runs only the
//     checks added with AddLiveness, and by default there are none: a
//     liveness probe that pings the database restarts every replica when the
//     database is down, which fixes nothing and turns an outage into a
//     restart storm. Add a liveness check only for a state the process cannot
//     leave on its own (a deadlocked worker, a poisoned cache).
//   - Readiness answers "may this process receive traffic?". It runs the
//     checks added with AddReadiness (database, downstream services), and it
//     fails from the moment Shutdown begins, before any check runs: a load
//     balancer polling /readyz stops sending new requests while the requests
//     in flight are still being answered, so connections are drained rather
//     than cut (see fx.App.Done).
//
// Success is 200 with
//
//	{"status":"ok","checks":{"db":{"status":"ok","duration_ms":1}}}
//
// ({"status":"ok"} when the probe has no checks). Failure is the 503
// FX_SERVICE_UNAVAILABLE envelope with Retry-After, and the per-check
// results in details:
//
//	{"error":{"code":"FX_SERVICE_UNAVAILABLE","message":"Readiness check failed: db",
//	  "details":{"checks":{"db":{"status":"fail","duration_ms":1000,"error":"check timed out after 1s"}}}}}
//
// During Shutdown readiness answers the same envelope without running the
// checks, so its details are {"checks":{}}: every 503 of a probe has the
// one details shape the OpenAPI document gives it.
//
// What a failed check says. Check errors are operator-facing (a DSN, a host
// name, a driver message), so the client sees the error text only when the
// check opted in by returning an *fx.Error (its Message, as everywhere in fx:
// an *fx.Error's message is written for clients) or when fx.Config.Development is
// set. Otherwise the result says "status":"fail" without an "error" key, and
// the raw error is logged (at warn level, once when a check starts failing,
// and at info level once when it recovers, so a probe polled every second
// does not repeat it; the 503 itself goes through the error boundary and is
// logged like every 5xx, with its message only). A timeout always says "check timed out after
// <Timeout>": that text is the framework's own.
//
// Bounded work. A check runs with a context that ends at Config.Timeout,
// and is reported as failed at its timeout even if it ignores the context
// and keeps running: the probe never hangs. Such a check is not started
// again while its previous run has not returned (it is reported failed:
// "previous run has not returned"), so a check stuck on a dead socket
// cannot pile up goroutines at the probe's polling rate. Checks run
// concurrently, at most Config.Concurrency at once, and concurrent
// requests for the same probe share one run (the ones that arrive while a
// run is in flight wait for it and get its result), so a flood of /readyz
// requests costs no more checks than one request does.
//
// Cost: a probe with no checks writes a prebuilt body: no allocation
// (BenchmarkLivezNoChecks: 0 allocs/op, 0.13-0.29 µs on a shared 2-core
// machine, less than a small c.JSON route, BenchmarkJSONSuccess). A probe with checks costs two goroutines, a context and a timer
// per check, and the JSON encoding of the results (a few microseconds plus
// what the checks themselves take).
package health

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fxhq/fx"
	"github.com/valyala/fasthttp"
)

// Check reports whether one dependency or internal state is healthy:
// nil is healthy, any error is a failure. ctx ends at the probe's timeout;
// a check should return soon after it ends. Return an *Error to have its
// message shown to clients (see Probes).
type Check func(ctx context.Context) error

// Config configures a Probes. The zero value is usable.
type Config struct {
	// Timeout bounds each check. Default 1s (DefaultTimeout).
	Timeout time.Duration

	// Concurrency is the most checks of one probe run at once. Default 8
	// (DefaultConcurrency).
	Concurrency int

	// RetryAfter is the Retry-After of a failed probe, in whole seconds.
	// Default 1.
	RetryAfter int
}

// Defaults of Config.
const (
	DefaultTimeout     = time.Second
	DefaultConcurrency = 8
)

// Result is the outcome of one check, as it appears in the response
// under "checks".
type Result struct {
	// Status is "ok" or "fail".
	Status string `json:"status"`
	// DurationMS is how long the check ran, in whole milliseconds (the
	// timeout when it timed out).
	DurationMS int64 `json:"duration_ms"`
	// Error says why the check failed; see Probes for when it is present.
	Error string `json:"error,omitempty"`
}

// Probes serves liveness and readiness probes (see the package
// documentation for the contract). Create it with New, add checks,
// then mount it with Register or route Liveness and Readiness yourself.
// Add every check before the App boots: the check lists are read without
// locks while serving, and adding one after the first probe panics.
type Probes struct {
	timeout    time.Duration
	conc       int
	retryAfter string
	live, read healthProbe
	registered bool // Register ran: the liveness routes' declarations are fixed
}

// healthProbe is one probe's checks and the run in flight.
type healthProbe struct {
	kind   string // "Liveness" or "Readiness"
	checks []*namedCheck
	served atomic.Bool // the probe has answered once: no more checks

	mu  sync.Mutex
	run *healthRun
}

type namedCheck struct {
	name    string
	fn      Check
	running atomic.Bool // a run of fn has not returned yet
	failing atomic.Bool // the last result was a failure (for logging transitions)
}

// healthRun is one evaluation of a probe, shared by the requests that
// arrive while it runs.
type healthRun struct {
	done    chan struct{}
	results []Result // aligned with the probe's checks
	errs    []error  // the raw errors, for the log
	failed  []string // names of failed checks
}

// New returns a Probes with no checks. Pass at most one Config.
func New(cfg ...Config) *Probes {
	var c Config
	if len(cfg) > 0 {
		c = cfg[0]
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.RetryAfter <= 0 {
		c.RetryAfter = 1
	}
	return &Probes{
		timeout: c.Timeout, conc: c.Concurrency, retryAfter: strconv.Itoa(c.RetryAfter),
		live: healthProbe{kind: "Liveness"}, read: healthProbe{kind: "Readiness"},
	}
}

// AddLiveness adds a check to the liveness probe. Liveness should not
// depend on downstream services (see Probes). name keys the check's result.
// Add liveness checks before Register: it declares the liveness 503 only
// when the probe has a check that can fail, and AddLiveness after
// Register panics.
func (h *Probes) AddLiveness(name string, check Check) {
	if h.registered {
		panic("health: Probes.AddLiveness(" + strconv.Quote(name) + ") called after Register; add liveness checks before Register")
	}
	h.live.add(name, check)
}

// AddReadiness adds a check to the readiness probe (a database ping, a
// downstream service). name keys the check's result.
func (h *Probes) AddReadiness(name string, check Check) { h.read.add(name, check) }

func (p *healthProbe) add(name string, check Check) {
	if check == nil {
		panic("health: Probes.Add" + p.kind + "(" + strconv.Quote(name) + "): nil check")
	}
	if p.served.Load() {
		panic("health: Probes.Add" + p.kind + " called after the probe served a request; add checks before serving")
	}
	for _, c := range p.checks {
		if c.name == name {
			panic("health: Probes.Add" + p.kind + ": check " + strconv.Quote(name) + " added twice")
		}
	}
	p.checks = append(p.checks, &namedCheck{name: name, fn: check})
}

// Register mounts the probes at GET /livez and GET /readyz (and HEAD) of
// r, an *App or a *Group. They are ordinary routes: the App's middleware
// runs around them, so exempt them from authentication there if probes
// arrive without credentials. On a Router (App, Group) their
// documentation lists the 503 FX_SERVICE_UNAVAILABLE a failed probe
// answers: always for /readyz (it answers 503 while
// the App shuts down), for /livez only when it has a liveness check (with
// none it always answers 200).
func (h *Probes) Register(r interface {
	Get(path string, h fx.Handler)
}) {
	reg, ok := r.(fx.Router)
	if !ok {
		r.Get("/livez", h.Liveness)
		r.Get("/readyz", h.Readiness)
		return
	}
	h.registered = true
	var live []fx.Middleware
	if len(h.live.checks) > 0 {
		live = []fx.Middleware{probeDeclared}
	}
	reg.Route(fx.Route{Method: fasthttp.MethodGet, Path: "/livez", Handler: h.Liveness, Middleware: live})
	reg.Route(fx.Route{Method: fasthttp.MethodGet, Path: "/readyz", Handler: h.Readiness, Middleware: []fx.Middleware{probeDeclared}})
}

// probeDeclared passes every request on; it declares (Declare) the 503
// a failed probe answers, with its Retry-After, so that the route table and the OpenAPI document
// list it. The probes' own handlers raise it; it is declared here rather
// than as the routes' own Route.Errors because a route's own
// documentation makes package fxtest hold the whole App to its document
// (strict mode), which registering the probes must not do. Cost: one
// call per probe request.
var probeDeclared = fx.Declare(func(c *fx.Ctx, next fx.Next) error { return next() }, fx.Declaration{
	Errors: []*fx.Error{errShuttingDown},
	Headers: []fx.HeaderDoc{{Name: fasthttp.HeaderRetryAfter, Statuses: []int{503},
		Description: "Seconds to wait before probing again (sent while the server shuts down)."}},
})

// Liveness is the handler of the liveness probe: 200 when every liveness
// check passes (always, when there are none), else the 503 envelope.
func (h *Probes) Liveness(c *fx.Ctx) error { return h.serve(c, &h.live) }

// Readiness is the handler of the readiness probe: the 503 envelope as soon
// as the App's Shutdown has begun (without running the checks), else 200
// when every readiness check passes and the 503 envelope when one fails.
// It watches App.Shutdown (and Run, which calls it): an App served by a
// server of your own (the nethttp adapter, a fasthttp.Server on Handler)
// must call app.Shutdown when that server starts draining.
func (h *Probes) Readiness(c *fx.Ctx) error {
	if shuttingDown(c.App()) {
		c.SetHeader(fasthttp.HeaderRetryAfter, h.retryAfter)
		return errShuttingDown
	}
	return h.serve(c, &h.read)
}

// errShuttingDown is the readiness answer during Shutdown: no check ran,
// so its details hold no results. It is kept in a variable and prebuilt:
// answering it costs no allocation. It is also the probes' declared 503,
// and its details' type is what the document gives every 503 of the
// probes (the failed-check answer has the same shape, with results).
var errShuttingDown = fx.NewCatalogError(fx.ErrorCodes.ServiceUnavailable, "The server is shutting down",
	&healthDetails{Checks: map[string]Result{}}).Prebuild()

// healthOK is the body of a probe without checks.
var healthOK = []byte(`{"status":"ok"}`)

func (h *Probes) serve(c *fx.Ctx, p *healthProbe) error {
	if !p.served.Load() {
		p.served.Store(true)
	}
	if len(p.checks) == 0 {
		return c.Send(fasthttp.StatusOK, "application/json", healthOK)
	}
	app := c.App()
	r := h.evaluate(p, app.Logger())
	dev := app.Config().Development
	results := make(map[string]Result, len(p.checks))
	for i, ck := range p.checks {
		res := r.results[i]
		if res.Status != "ok" && r.errs[i] != nil {
			res.Error = publicCheckError(r.errs[i], dev)
		}
		results[ck.name] = res
	}
	if len(r.failed) == 0 {
		return c.JSON(fasthttp.StatusOK, healthBody{Status: "ok", Checks: results})
	}
	c.SetHeader(fasthttp.HeaderRetryAfter, h.retryAfter)
	return fx.NewCatalogError(fx.ErrorCodes.ServiceUnavailable, p.kind+" check failed: "+joinNames(r.failed),
		&healthDetails{Checks: results})
}

type healthBody struct {
	Status string            `json:"status"`
	Checks map[string]Result `json:"checks"`
}

// healthDetails is the details of a probe's 503: each check's result by
// name (none during Shutdown).
type healthDetails struct {
	Checks map[string]Result `json:"checks"`
}

func joinNames(names []string) string {
	s := names[0]
	for _, n := range names[1:] {
		s += ", " + n
	}
	return s
}

// checkStateError is a failure the framework itself reports for a check
// (a timeout, a previous run still going). Its text reveals nothing about
// the dependency, so it is always shown.
type checkStateError struct{ msg string }

func (e *checkStateError) Error() string { return e.msg }

var errStillRunning = &checkStateError{"previous run has not returned"}

// publicCheckError is the text a client may see for a failed check: an
// *Error's message (the check chose it for clients), the framework's own
// texts, or, in Development only, the raw error text.
func publicCheckError(err error, dev bool) string {
	var se *checkStateError
	if errors.As(err, &se) {
		return se.msg
	}
	if fe, ok := errors.AsType[*fx.Error](err); ok {
		return fe.Message
	}
	if dev {
		return err.Error()
	}
	return ""
}

// evaluate runs p's checks, or waits for the run already in flight and
// returns its result.
func (h *Probes) evaluate(p *healthProbe, logger *slog.Logger) *healthRun {
	p.mu.Lock()
	if r := p.run; r != nil {
		p.mu.Unlock()
		if testHookJoin != nil {
			testHookJoin()
		}
		<-r.done
		return r
	}
	r := &healthRun{
		done:    make(chan struct{}),
		results: make([]Result, len(p.checks)),
		errs:    make([]error, len(p.checks)),
	}
	p.run = r
	p.mu.Unlock()

	sem := make(chan struct{}, h.conc)
	var wg sync.WaitGroup
	for i, ck := range p.checks {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			r.results[i], r.errs[i] = h.runCheck(ck)
		}()
	}
	wg.Wait()
	for i, ck := range p.checks {
		failed := r.errs[i] != nil
		if failed {
			r.failed = append(r.failed, ck.name)
		}
		if ck.failing.Swap(failed) != failed {
			if failed {
				logger.LogAttrs(context.Background(), slog.LevelWarn, "fx: health check failing",
					slog.String("probe", p.kind), slog.String("check", ck.name), slog.Any("error", r.errs[i]))
			} else {
				logger.LogAttrs(context.Background(), slog.LevelInfo, "fx: health check recovered",
					slog.String("probe", p.kind), slog.String("check", ck.name))
			}
		}
	}

	p.mu.Lock()
	p.run = nil
	p.mu.Unlock()
	close(r.done)
	return r
}

// testHookJoin, when set by a test, is called by a request that joins
// a run in flight (health_internal_test.go). It is never set otherwise.
var testHookJoin func()

// runCheck runs one check within the timeout. The check runs in its own
// goroutine so that one ignoring its context is abandoned at the timeout
// (and, through running, not started again until it returns).
func (h *Probes) runCheck(ck *namedCheck) (Result, error) {
	if !ck.running.CompareAndSwap(false, true) {
		return Result{Status: "fail"}, errStillRunning
	}
	start := time.Now() // before the deadline is set: a timed-out check reports at least Timeout
	ctx, cancel := context.WithTimeout(context.Background(), h.timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		var err error
		defer func() {
			if v := recover(); v != nil {
				err = &fx.PanicError{Value: v}
			}
			// Cleared before the result is delivered: a probe that follows
			// at once must not find the check "still running".
			ck.running.Store(false)
			done <- err
		}()
		err = ck.fn(ctx)
	}()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		err = &checkStateError{"check timed out after " + h.timeout.String()}
	}
	res := Result{Status: "ok", DurationMS: time.Since(start).Milliseconds()}
	if err != nil {
		res.Status = "fail"
	}
	return res, err
}

// shuttingDown reports whether app's shutdown has begun (fx.App.Done).
func shuttingDown(app *fx.App) bool {
	select {
	case <-app.Done():
		return true
	default:
		return false
	}
}
