package wasm

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/valyala/fasthttp"

	"github.com/fxhq/fx"
)

// initialBuffer is the request buffer reserved in every new instance: most
// requests fit, so fx_alloc is not called again.
const initialBuffer = 16 << 10

// ErrInvalidModule is wrapped by every error about the module itself: it
// does not compile, lacks an export of the ABI, declares too much memory,
// imports something other than WASI preview 1, or speaks another ABI
// version. Test for it with errors.Is.
var ErrInvalidModule = errors.New("wasm: invalid module")

var (
	// errGuestFailed is the client-facing error of every guest failure.
	errGuestFailed = fx.NewCatalogError(fx.ErrorCodes.WasmError, "WASM guest failed")
	// errUnavailable is returned when no instance frees up in time.
	errUnavailable = fx.NewCatalogError(fx.ErrorCodes.ServiceUnavailable, "No WASM instance available")
)

// GuestError is the error a Module's Handler returns when the guest fails.
// errors.As finds in it the *fx.Error 502 FX_WASM_ERROR (the client sees
// only that error's fixed message) and the underlying cause. The Handler
// has already logged it with the guest's stderr tail.
type GuestError struct {
	Module string // Config.Name
	Err    error  // what failed: trap, exit, timeout or invalid response
}

// Error returns "wasm: module NAME: CAUSE".
func (e *GuestError) Error() string { return "wasm: module " + e.Module + ": " + e.Err.Error() }

// Unwrap returns the 502 FX_WASM_ERROR *fx.Error and the cause.
func (e *GuestError) Unwrap() []error { return []error{errGuestFailed, e.Err} }

// Module is one guest module: its compiled code and its pool of instances.
// Its methods are safe for concurrent use.
type Module struct {
	cfg    Config
	binary []byte

	initOnce sync.Once
	initErr  error
	ready    atomic.Bool // Init succeeded
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	modCfg   wazero.ModuleConfig
	pool     *pool

	closeOnce sync.Once
	closeErr  error
}

// New returns a Module for binary without doing any work: compilation
// happens in Init, which the Module's Plugin runs at boot. Most programs
// use Mount or Compile instead. binary must not be modified afterwards.
func New(binary []byte, config ...Config) *Module {
	var cfg Config
	if len(config) > 0 {
		cfg = config[0]
	}
	return &Module{cfg: cfg.withDefaults(binary), binary: binary}
}

// Compile is New followed by Init: it compiles and validates binary now,
// creates Config.Prewarm instances, and returns the error of a bad module
// (wrapping ErrInvalidModule) instead of a Module. The caller owns the
// Module and must Close it, or register m.Plugin() to close it with the
// App. A Go guest takes ~1.8 s to compile (see Config.Cache), a small
// hand-written one well under a millisecond.
func Compile(binary []byte, config ...Config) (*Module, error) {
	m := New(binary, config...)
	if err := m.Init(); err != nil {
		return nil, err
	}
	return m, nil
}

// Mount registers, in one call, a route method+path served by binary and
// the Module's Plugin, so the module is compiled and prewarmed when app
// boots (a bad module makes Boot fail with an error wrapping
// ErrInvalidModule) and closed by app.Shutdown. config.Name defaults to
// "METHOD path". The returned Module is not usable before Boot.
func Mount(app *fx.App, method, path string, binary []byte, config ...Config) *Module {
	var cfg Config
	if len(config) > 0 {
		cfg = config[0]
	}
	if cfg.Name == "" {
		cfg.Name = method + " " + path
	}
	m := New(binary, cfg)
	app.Register(m.Plugin())
	app.Handle(method, path, m.Handler())
	return m
}

// Name returns Config.Name (defaulted).
func (m *Module) Name() string { return m.cfg.Name }

// Init compiles and validates the module, checks it against the ABI (see
// ABI.md) and the memory limit, instantiates one instance to run its
// _initialize and check its ABI version, and prewarms the pool. It is
// idempotent: later calls return the first call's result. Errors about the
// module wrap ErrInvalidModule.
func (m *Module) Init() error {
	m.initOnce.Do(func() {
		m.initErr = m.init(context.Background())
		m.binary = nil
		m.ready.Store(m.initErr == nil)
	})
	return m.initErr
}

func (m *Module) init(ctx context.Context) error {
	rcfg := wazero.NewRuntimeConfig().
		WithMemoryLimitPages(uint32(m.cfg.MemoryLimit / pageSize)).
		WithCloseOnContextDone(true)
	if m.cfg.Cache != nil {
		rcfg = rcfg.WithCompilationCache(m.cfg.Cache)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, rcfg)
	fail := func(err error) error {
		_ = rt.Close(ctx)
		return err
	}
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		return fail(fmt.Errorf("wasm: module %q: instantiating WASI: %w", m.cfg.Name, err))
	}
	compiled, err := rt.CompileModule(ctx, m.binary)
	if err != nil {
		hint := ""
		if strings.Contains(err.Error(), "over limit") {
			hint = " (raise Config.MemoryLimit, now " + strconv.Itoa(m.cfg.MemoryLimit>>20) + " MiB, or shrink the module's initial memory)"
		}
		return fail(fmt.Errorf("%w: module %q does not compile: %v%s", ErrInvalidModule, m.cfg.Name, err, hint))
	}
	if err := m.validate(compiled); err != nil {
		return fail(err)
	}
	m.rt, m.compiled = rt, compiled
	// Nanosleep is set per instance (newInstance): it must see the running
	// call's deadline, which wazero does not pass to it (sleep.go).
	m.modCfg = wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions(ExportInitialize).
		WithSysWalltime().
		WithSysNanotime().
		WithRandSource(rand.Reader)
	m.pool = newPool(m.cfg.MaxInstances, m.cfg.MaxIdle, m.cfg.QueueTimeout)
	for i := range max(m.cfg.Prewarm, 1) {
		inst, err := m.newInstance(ctx)
		if err != nil {
			m.pool.close()
			if !errors.Is(err, ErrInvalidModule) {
				err = fmt.Errorf("%w: module %q failed its first instantiation: %v", ErrInvalidModule, m.cfg.Name, err)
			}
			return fail(err)
		}
		if i >= m.cfg.Prewarm {
			inst.close()
			break
		}
		m.pool.put(inst)
	}
	return nil
}

// validate checks the compiled module's imports and exports against the ABI.
func (m *Module) validate(cm wazero.CompiledModule) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: module %q %s (see wasm/ABI.md)", ErrInvalidModule, m.cfg.Name, fmt.Sprintf(format, args...))
	}
	for _, f := range cm.ImportedFunctions() {
		mod, name, _ := f.Import()
		if mod != wasi_snapshot_preview1.ModuleName {
			return bad("imports %s.%s; only %s functions are provided", mod, name, wasi_snapshot_preview1.ModuleName)
		}
	}
	if len(cm.ImportedMemories()) > 0 {
		return bad("imports its memory; it must define and export %q", ExportMemory)
	}
	mem, ok := cm.ExportedMemories()[ExportMemory]
	if !ok {
		return bad("does not export its memory as %q", ExportMemory)
	}
	if minBytes := uint64(mem.Min()) * pageSize; minBytes > uint64(m.cfg.MemoryLimit) {
		return bad("declares %d MiB of initial memory (%d pages), over the limit of %d MiB (Config.MemoryLimit)",
			minBytes>>20, mem.Min(), m.cfg.MemoryLimit>>20)
	}
	fns := cm.ExportedFunctions()
	i32, i64 := api.ValueTypeI32, api.ValueTypeI64
	for _, want := range []struct {
		name    string
		params  []api.ValueType
		results []api.ValueType
		sig     string
	}{
		{ExportABIVersion, nil, []api.ValueType{i32}, "func() i32"},
		{ExportAlloc, []api.ValueType{i32}, []api.ValueType{i32}, "func(size i32) i32"},
		{ExportHandle, []api.ValueType{i32, i32}, []api.ValueType{i64}, "func(ptr, len i32) i64"},
	} {
		f, ok := fns[want.name]
		if !ok {
			return bad("does not export %q (%s)", want.name, want.sig)
		}
		if !sameTypes(f.ParamTypes(), want.params) || !sameTypes(f.ResultTypes(), want.results) {
			return bad("exports %q with the wrong signature; want %s", want.name, want.sig)
		}
	}
	if f, ok := fns[ExportInitialize]; ok && (len(f.ParamTypes()) > 0 || len(f.ResultTypes()) > 0) {
		return bad("exports %q with the wrong signature; want func()", ExportInitialize)
	}
	if _, ok := fns["_start"]; ok {
		if _, ok := fns[ExportInitialize]; !ok {
			return bad("is a WASI command (exports _start): build a reactor instead (Go: -buildmode=c-shared)")
		}
	}
	return nil
}

func sameTypes(a, b []api.ValueType) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Plugin returns an fx.Plugin named "wasm:"+Name whose Setup runs Init (so
// a bad module fails Boot with an error wrapping ErrInvalidModule) and
// registers Close with app.OnShutdown.
func (m *Module) Plugin() fx.Plugin {
	return fx.Plugin{
		Name: "wasm:" + m.cfg.Name,
		Setup: func(app *fx.App) error {
			if err := m.Init(); err != nil {
				return err
			}
			app.OnShutdown(m.Close)
			return nil
		},
	}
}

// Handler returns the fx.Handler that serves requests with the guest. The
// Module must have been initialised (Init, Compile, Mount or Plugin) by the
// first request; until then every request is a logged 502.
//
// Cost per request, beyond the guest's own work: one pool hand-off, the
// request copied once into guest memory, one guest call (plus one fx_alloc
// call when a request outgrows the instance's buffer), and the strict JSON
// decoding of the response (a few µs for a small one).
func (m *Module) Handler() fx.Handler { return m.serve }

// Close closes every instance and the runtime. Calls in progress are
// cancelled (they answer 502, a sleeping guest included) and Close waits
// for them to end, which they do at once. Requests after Close are
// answered 503 (a logged 502 if the Module was never initialised). It is
// idempotent and returns the first call's result.
func (m *Module) Close() error {
	m.closeOnce.Do(func() {
		m.initOnce.Do(func() { // closed before Init: never initialise later
			m.initErr, m.binary = errors.New("wasm: module closed before Init"), nil
		})
		if m.pool != nil {
			m.pool.close()
			// No call outlives this bound even uncancelled (instance.go).
			m.pool.drain(max(m.cfg.Timeout, minInstantiateTimeout))
		}
		if m.rt != nil {
			m.closeErr = m.rt.Close(context.Background())
		}
	})
	return m.closeErr
}

// Stats is a snapshot of a Module's pool counters.
type Stats struct {
	Live      int    // instances alive, busy or idle (≤ MaxInstances)
	Idle      int    // instances waiting for a request
	Created   uint64 // instances ever created, prewarmed ones included
	Discarded uint64 // instances closed after a failure
	Recycled  uint64 // instances closed after MaxCalls or RecycleMemory
	Calls     uint64 // requests handed to the guest
	Failures  uint64 // requests answered 502
	Rejected  uint64 // requests answered 503: no instance in time
}

// Stats returns the pool's counters (all zero until Init has succeeded).
// It takes the pool lock briefly.
func (m *Module) Stats() Stats {
	if !m.ready.Load() { // m.pool is written by Init, published by ready
		return Stats{}
	}
	p := m.pool
	p.mu.Lock()
	s := Stats{Live: p.live, Idle: len(p.idle)}
	p.mu.Unlock()
	s.Created, s.Discarded, s.Recycled = p.created.Load(), p.discarded.Load(), p.recycled.Load()
	s.Calls, s.Failures, s.Rejected = p.calls.Load(), p.failures.Load(), p.rejected.Load()
	return s
}

// serve is the Handler.
func (m *Module) serve(c *fx.Ctx) error {
	if !m.ready.Load() {
		return m.fail(c, nil, errors.New("module not initialised: register Module.Plugin(), or use Mount or Compile"))
	}
	rc := c.RequestCtx()
	inst, err := m.acquire(m.pool.ctx)
	if err != nil {
		if err == errUnavailable {
			c.SetHeader("Retry-After", "1")
			return err
		}
		return m.fail(c, nil, err)
	}
	m.pool.calls.Add(1)
	if err := m.call(c, rc, inst); err != nil {
		m.pool.discarded.Add(1)
		m.pool.release(inst, false)
		return m.fail(c, inst, err)
	}
	inst.resp.write(&rc.Response)
	keep := true
	if (m.cfg.MaxCalls > 0 && inst.calls >= m.cfg.MaxCalls) ||
		(m.cfg.RecycleMemory > 0 && int(inst.mem.Size()) > m.cfg.RecycleMemory) {
		keep = false
		m.pool.recycled.Add(1)
	}
	m.pool.release(inst, keep)
	return nil
}

// fail logs a guest failure with the stderr tail and returns the error
// the client sees as 502.
func (m *Module) fail(c *fx.Ctx, inst *instance, err error) error {
	m.poolFailures()
	attrs := []slog.Attr{
		slog.String("module", m.cfg.Name),
		slog.String("method", c.Method()),
		slog.String("path", c.Path()),
		slog.String("error", err.Error()),
	}
	if inst != nil {
		attrs = append(attrs, slog.Int("instance_calls", inst.calls), slog.String("stderr", inst.stderr.String()))
	}
	c.App().Logger().LogAttrs(context.Background(), slog.LevelError, "wasm: guest failed; instance discarded", attrs...)
	return &GuestError{Module: m.cfg.Name, Err: err}
}

func (m *Module) poolFailures() {
	if m.pool != nil {
		m.pool.failures.Add(1)
	}
}

// call runs one request through inst and leaves the validated response in
// inst.resp.
func (m *Module) call(c *fx.Ctx, rc *fasthttp.RequestCtx, inst *instance) error {
	ctx, cancel := context.WithTimeout(m.pool.ctx, m.cfg.Timeout) // Close cancels it
	defer cancel()
	inst.sleep.begin(ctx, c) // the guest's sleeps end with the call: sleep.go
	defer inst.sleep.end()
	inst.stderr.Reset()

	size, nh, np := requestSize(c, rc)
	if size > m.cfg.MemoryLimit {
		return fmt.Errorf("request of %d bytes does not fit the memory limit of %d bytes", size, m.cfg.MemoryLimit)
	}
	if uint32(size) > inst.bufCap {
		// Grow geometrically, but not past half the memory limit: asking
		// for more than the guest can hold would fail a request that fits.
		grow := min(2*int(inst.bufCap), m.cfg.MemoryLimit/2)
		if err := inst.reserve(ctx, uint32(max(size, grow))); err != nil {
			return m.guestErr(inst, ExportAlloc, err)
		}
	}
	view, ok := inst.mem.Read(inst.bufPtr, uint32(size))
	if !ok {
		return fmt.Errorf("request buffer at %#x is outside memory", inst.bufPtr)
	}
	if enc := encodeRequest(view[:0], c, rc, nh, np); len(enc) != size || &enc[0] != &view[0] {
		// The request changed between sizing and encoding (it cannot with
		// fasthttp today); fall back to a copy.
		if uint32(len(enc)) > inst.bufCap {
			return fmt.Errorf("request size changed while encoding (%d != %d)", len(enc), size)
		}
		inst.mem.Write(inst.bufPtr, enc)
		size = len(enc)
	}

	st := inst.stack[:2]
	st[0], st[1] = uint64(inst.bufPtr), uint64(size)
	inst.calls++
	if err := inst.handle.CallWithStack(ctx, st); err != nil {
		return m.guestErr(inst, ExportHandle, err)
	}
	if ctx.Err() != nil {
		// The deadline passed as the call returned: wazero's watcher may
		// close the module just after reporting success, so the instance
		// must not go back to the pool.
		return fmt.Errorf("%s: timed out after %v", ExportHandle, m.cfg.Timeout)
	}
	ptr, n := uint32(st[0]>>32), uint32(st[0])
	switch {
	case n == 0:
		return errors.New("invalid response: empty")
	case int(n) > m.cfg.MaxResponseBytes:
		return fmt.Errorf("invalid response: %d bytes, over MaxResponseBytes %d", n, m.cfg.MaxResponseBytes)
	}
	data, ok := inst.mem.Read(ptr, n)
	if !ok {
		return fmt.Errorf("invalid response: location %#x+%d is outside memory of %d bytes", ptr, n, inst.mem.Size())
	}
	if err := parseResponse(data, &inst.resp); err != nil {
		return fmt.Errorf("invalid response: %w", err)
	}
	return nil
}
