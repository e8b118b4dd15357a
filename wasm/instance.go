package wasm

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
)

// instance is one instantiated guest. It is used by one request at a time
// (the pool hands it out exclusively) and is closed after any failure.
type instance struct {
	mod    api.Module
	mem    api.Memory
	alloc  api.Function
	handle api.Function

	bufPtr, bufCap uint32 // the host's request buffer inside guest memory
	calls          int
	stderr         tailWriter
	stack          [2]uint64
	resp           response
	sleep          sleeper // bounds the guest's sleeps by the running call
}

// minInstantiateTimeout bounds instantiation (running _initialize) when
// Config.Timeout is shorter: a Go guest needs ~8 ms, more on a busy machine.
const minInstantiateTimeout = 5 * time.Second

// newInstance instantiates the compiled module, runs _initialize, checks
// the ABI version and reserves the initial request buffer.
func (m *Module) newInstance(ctx context.Context) (*instance, error) {
	inst := &instance{stderr: tailWriter{max: m.cfg.StderrTail}}
	cfg := m.modCfg.WithStdout(&inst.stderr).WithStderr(&inst.stderr).WithNanosleep(inst.nanosleep)
	ctx, cancel := context.WithTimeout(ctx, max(m.cfg.Timeout, minInstantiateTimeout))
	defer cancel()
	inst.sleep.begin(ctx, nil) // _initialize may sleep too
	defer inst.sleep.end()
	mod, err := m.rt.InstantiateModule(ctx, m.compiled, cfg)
	if err != nil {
		err = m.guestErr(inst, "instantiate", err)
		if tail := inst.stderr.String(); tail != "" {
			err = fmt.Errorf("%w; guest output: %s", err, tail)
		}
		return nil, err
	}
	inst.mod = mod
	inst.mem = mod.ExportedMemory(ExportMemory)
	inst.alloc = mod.ExportedFunction(ExportAlloc)
	inst.handle = mod.ExportedFunction(ExportHandle)
	if inst.mem == nil || inst.alloc == nil || inst.handle == nil {
		inst.close()
		return nil, fmt.Errorf("wasm: module %q: exports vanished after instantiation", m.cfg.Name)
	}
	st := inst.stack[:1]
	if err := mod.ExportedFunction(ExportABIVersion).CallWithStack(ctx, st); err != nil {
		inst.close()
		return nil, m.guestErr(inst, ExportABIVersion, err)
	}
	if v := uint32(st[0]); v != ABIVersion {
		inst.close()
		return nil, fmt.Errorf("%w: module %q speaks ABI version %d, this host speaks %d", ErrInvalidModule, m.cfg.Name, v, ABIVersion)
	}
	if err := inst.reserve(ctx, initialBuffer); err != nil {
		inst.close()
		return nil, m.guestErr(inst, ExportAlloc, err)
	}
	if ctx.Err() != nil { // see call: the module may be closed just after
		inst.close()
		return nil, fmt.Errorf("instantiate: timed out after %v", max(m.cfg.Timeout, minInstantiateTimeout))
	}
	return inst, nil
}

// reserve makes the request buffer at least n bytes, calling fx_alloc.
func (inst *instance) reserve(ctx context.Context, n uint32) error {
	st := inst.stack[:1]
	st[0] = uint64(n)
	if err := inst.alloc.CallWithStack(ctx, st); err != nil {
		return err
	}
	ptr := uint32(st[0])
	if ptr == 0 || uint64(ptr)+uint64(n) > uint64(inst.mem.Size()) {
		return fmt.Errorf("fx_alloc(%d) returned %#x, outside memory of %d bytes", n, ptr, inst.mem.Size())
	}
	inst.bufPtr, inst.bufCap = ptr, n
	return nil
}

func (inst *instance) close() {
	if inst.mod != nil {
		_ = inst.mod.Close(context.Background())
	}
}

// guestErr describes a failed call into the guest. Traps, exits and
// timeouts are told apart for the log.
func (m *Module) guestErr(inst *instance, what string, err error) error {
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		switch exit.ExitCode() {
		case sys.ExitCodeDeadlineExceeded:
			limit := m.cfg.Timeout
			if what == "instantiate" {
				limit = max(limit, minInstantiateTimeout)
			}
			return fmt.Errorf("%s: timed out after %v", what, limit)
		case sys.ExitCodeContextCanceled:
			return fmt.Errorf("%s: cancelled", what)
		}
		return fmt.Errorf("%s: guest exited with code %d", what, exit.ExitCode())
	}
	return fmt.Errorf("%s: trap: %w", what, err)
}

// tailWriter keeps the first max/4 bytes written and the last 3*max/4:
// the guest's stdout and stderr, for the log when it fails. Both ends
// matter — a Go runtime crash prints its reason first, then every
// goroutine. An instance is used by one goroutine at a time, so no locking
// is needed.
type tailWriter struct {
	head, tail []byte
	max        int
	dropped    int
}

func (t *tailWriter) Write(p []byte) (int, error) {
	n := len(p)
	if t.max <= 0 {
		return n, nil
	}
	if room := t.max/4 - len(t.head); room > 0 {
		k := min(room, len(p))
		t.head = append(t.head, p[:k]...)
		p = p[k:]
	}
	keep := t.max - t.max/4
	if len(p) >= keep {
		t.dropped += len(t.tail) + len(p) - keep
		t.tail = append(t.tail[:0], p[len(p)-keep:]...)
		return n, nil
	}
	if over := len(t.tail) + len(p) - keep; over > 0 {
		t.dropped += over
		t.tail = t.tail[:copy(t.tail, t.tail[over:])]
	}
	t.tail = append(t.tail, p...)
	return n, nil
}

func (t *tailWriter) String() string {
	if t.dropped == 0 {
		return string(t.head) + string(t.tail)
	}
	return string(t.head) + "\n[... " + strconv.Itoa(t.dropped) + " bytes elided ...]\n" + string(t.tail)
}

func (t *tailWriter) Reset() { t.head, t.tail, t.dropped = t.head[:0], t.tail[:0], 0 }
