package wasm

import (
	"crypto/sha256"
	"encoding/hex"
	"runtime"
	"time"

	"github.com/tetratelabs/wazero"
)

// Defaults of Config.
const (
	DefaultMemoryLimit      = 16 << 20    // Config.MemoryLimit: 16 MiB per instance
	DefaultTimeout          = time.Second // Config.Timeout: per call
	DefaultQueueTimeout     = time.Second // Config.QueueTimeout: wait for an instance
	DefaultMaxResponseBytes = 1 << 20     // Config.MaxResponseBytes: 1 MiB
	DefaultMaxCalls         = 100_000     // Config.MaxCalls: calls before recycling
	DefaultStderrTail       = 4 << 10     // Config.StderrTail: 4 KiB of guest output
)

// Config tunes a Module. The zero value is usable: every zero field takes
// its default. Fields documented with "negative disables" treat any
// negative value that way.
type Config struct {
	// Name identifies the module in logs and in its plugin name
	// ("wasm:"+Name). Default: Mount uses "METHOD path"; otherwise
	// "guest-" and the first 8 hex digits of the binary's SHA-256.
	Name string

	// MaxInstances bounds the live instances (busy and idle), so also the
	// requests served at once. Default runtime.GOMAXPROCS(0): guest code is
	// CPU-bound and cannot block on I/O, so more instances than CPUs only
	// add memory.
	MaxInstances int

	// MaxIdle is how many instances are kept warm between requests, at
	// most MaxInstances. Default MaxInstances; negative keeps none (each
	// request instantiates, which costs ~40 µs for a small guest and ~8 ms
	// for a Go guest).
	MaxIdle int

	// Prewarm is how many instances are created at boot, at most MaxIdle.
	// Default 1. Boot always instantiates one instance to validate the
	// module (its _initialize and ABI version), even when Prewarm is
	// negative (or MaxIdle is); that instance is then closed at once.
	Prewarm int

	// MaxCalls recycles an instance (closes it after its response is sent)
	// once it has served this many requests, bounding state a guest
	// accumulates. Default 100000; negative disables.
	MaxCalls int

	// RecycleMemory recycles an instance whose linear memory has grown past
	// this many bytes (wasm memory never shrinks). Default 3/4 of
	// MemoryLimit; negative disables.
	RecycleMemory int

	// MemoryLimit is the most linear memory an instance may have, in bytes,
	// rounded up to 64 KiB pages. A module whose declared minimum exceeds
	// it fails at boot; a guest that grows past it sees memory.grow fail
	// (a Go guest then dies "out of memory": a 502). Default 16 MiB.
	MemoryLimit int

	// Timeout bounds one call into the guest; past it the instance is
	// closed and the request is a 502. Default 1s. It cannot be disabled:
	// an instance stuck in a loop would be lost to the pool forever.
	//
	// It bounds sleeping too: a guest sleeping in WASI poll_oneoff (Go's
	// time.Sleep) is woken when the deadline passes and the call ends then
	// as a timeout, so time.Sleep(30*time.Second) under a 200 ms Timeout
	// answers 502 after ~200 ms and the instance is discarded. A sleeping
	// call also ends at once (502) when the App shuts down or the Module is
	// closed, so neither waits for it; a computing call is interrupted by
	// Close, while App.Shutdown waits for it at most Timeout.
	Timeout time.Duration

	// QueueTimeout bounds how long a request waits for an instance when all
	// MaxInstances are busy; then it is answered 503
	// FX_SERVICE_UNAVAILABLE. Default 1s; negative means no waiting.
	QueueTimeout time.Duration

	// MaxResponseBytes caps the encoded WasmResponse a guest may return;
	// larger is a 502. Default 1 MiB.
	MaxResponseBytes int

	// StderrTail is how many trailing bytes of the guest's stdout and
	// stderr (per call) are kept for the failure log. Default 4 KiB;
	// negative keeps none.
	StderrTail int

	// Cache, when set, stores compiled machine code so a restart skips most
	// of the compilation (a Go guest: ~1.8 s down to ~60 ms). Create it with
	// wazero.NewCompilationCacheWithDir; it may be shared by Modules and
	// must outlive them.
	Cache wazero.CompilationCache
}

func (c Config) withDefaults(binary []byte) Config {
	if c.Name == "" {
		sum := sha256.Sum256(binary)
		c.Name = "guest-" + hex.EncodeToString(sum[:4])
	}
	if c.MaxInstances <= 0 {
		c.MaxInstances = runtime.GOMAXPROCS(0)
	}
	switch {
	case c.MaxIdle == 0 || c.MaxIdle > c.MaxInstances:
		c.MaxIdle = c.MaxInstances
	case c.MaxIdle < 0:
		c.MaxIdle = 0
	}
	switch {
	case c.Prewarm == 0:
		c.Prewarm = 1
	case c.Prewarm < 0:
		c.Prewarm = 0
	}
	c.Prewarm = min(c.Prewarm, c.MaxIdle)
	if c.MaxCalls == 0 {
		c.MaxCalls = DefaultMaxCalls
	}
	if c.MemoryLimit <= 0 {
		c.MemoryLimit = DefaultMemoryLimit
	}
	c.MemoryLimit = min((c.MemoryLimit+pageSize-1)/pageSize*pageSize, maxPages*pageSize)
	if c.RecycleMemory == 0 {
		c.RecycleMemory = c.MemoryLimit / 4 * 3
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.QueueTimeout == 0 {
		c.QueueTimeout = DefaultQueueTimeout
	}
	if c.MaxResponseBytes <= 0 {
		c.MaxResponseBytes = DefaultMaxResponseBytes
	}
	switch {
	case c.StderrTail == 0:
		c.StderrTail = DefaultStderrTail
	case c.StderrTail < 0:
		c.StderrTail = 0
	}
	return c
}

const (
	pageSize = 64 << 10
	maxPages = 65536
)
