package wasm_test

import (
	"sync"
	"testing"

	"github.com/fxhq/fx/wasm"
)

// TestStatsDuringInit: Stats may be called (say, by a metrics goroutine)
// while the Module initialises; the race detector must see no race.
func TestStatsDuringInit(t *testing.T) {
	m := wasm.New(fixture(t, "ok"), wasm.Config{Cache: testCache})
	defer m.Close()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 1000 {
			_ = m.Stats()
		}
	}()
	if err := m.Init(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if s := m.Stats(); s.Live != 1 || s.Idle != 1 {
		t.Errorf("stats after Init %+v", s)
	}
}

// TestPrewarmNegative: the instance that validates the module at boot is
// closed again when Prewarm is negative; the first request creates one.
func TestPrewarmNegative(t *testing.T) {
	app, m, _ := mount(t, "ok", wasm.Config{Prewarm: -1, MaxInstances: 2})
	if s := m.Stats(); s.Live != 0 || s.Idle != 0 || s.Created != 0 {
		t.Fatalf("after boot: %+v", s)
	}
	if r := do(t, app, "POST", "/", nil); r.status != 200 {
		t.Fatal(r.status)
	}
	if s := m.Stats(); s.Live != 1 || s.Idle != 1 || s.Created != 1 {
		t.Errorf("after one request: %+v", s)
	}
}
