//go:build unix

package static_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/static"
)

// TestStaticRefusesFIFO: a FIFO in the root (opening it for reading
// waits for a writer, forever) is answered 404 FX_NOT_FOUND at once, on
// GET and HEAD, with and without Compress, through the root directory and
// through StaticConfig.FS, by 8 concurrent requests; and no goroutine is
// left behind blocked on it.
func TestStaticRefusesFIFO(t *testing.T) {
	root := t.TempDir()
	fifo := filepath.Join(root, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := os.WriteFile(filepath.Join(root, "ok.txt"), []byte("ok"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []static.Config{{}, {Compress: true}, {FS: os.DirFS(root)}} {
		app := quiet()
		static.Mount(app, "/s", root, cfg)
		if err := app.Boot(); err != nil {
			t.Fatal(err)
		}
		c := fxtest.New(t, app) // shuts app down when the test ends
		// Runs before Shutdown (cleanups run last first): a writer opening
		// the FIFO releases any reader blocked in open, so that a failing
		// run still ends.
		t.Cleanup(func() {
			if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
		})
		before := runtime.NumGoroutine()
		var wg sync.WaitGroup
		for i := range 8 {
			method := [2]string{"GET", "HEAD"}[i%2]
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				req := httptest.NewRequestWithContext(ctx, method, "/s/pipe", nil)
				req.Header.Set("Accept-Encoding", "gzip")
				resp, err := app.Test(req)
				if err != nil {
					t.Errorf("%+v %s /s/pipe: no answer within 2 s (%v)", cfg, method, err)
					return
				}
				resp.Body.Close()
				if resp.StatusCode != 404 {
					t.Errorf("%+v %s /s/pipe: %d, want 404", cfg, method, resp.StatusCode)
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		c.Get("/s/pipe").Do().AssertError(404, fx.ErrorCodes.NotFound)
		if r := c.Get("/s/ok.txt").Do(); r.Status != 200 || string(r.Body) != "ok" {
			t.Fatalf("%+v ok.txt: %d %q", cfg, r.Status, r.Body)
		}
		deadline := time.Now().Add(2 * time.Second)
		for runtime.NumGoroutine() > before+2 {
			if time.Now().After(deadline) {
				t.Fatalf("%+v: %d goroutines after the requests, %d before", cfg, runtime.NumGoroutine(), before)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
