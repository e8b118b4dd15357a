package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxhq/fx/fxtest"
)

// TestExample builds the guest with the documented command and serves it.
func TestExample(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go toolchain on PATH")
	}
	out := filepath.Join(t.TempDir(), "guest.wasm")
	cmd := exec.Command(goBin, "build", "-buildmode=c-shared", "-o", out, "./guest")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("the toolchain cannot build a wasip1 reactor: %v\n%s", err, msg)
	}
	module, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	c := fxtest.New(t, newApp(module)) // boots: compiles the guest
	for _, tc := range []struct {
		method, path, body, want string
		status                   int
	}{
		{"GET", "/wasm/hello", "", "Hello from a Go guest!\n", 200},
		{"GET", "/wasm/greet/A%22da", "", `{"greeting":"Hello, A\"da!"}`, 200},
		{"POST", "/wasm/reverse", "stressed", "desserts", 200},
	} {
		r := c.Request(tc.method, tc.path).Body("text/plain", []byte(tc.body)).Do().AssertStatus(tc.status)
		if !strings.Contains(string(r.Body), tc.want) {
			t.Errorf("%s %s: %d %s", tc.method, tc.path, r.Status, r.Body)
		}
	}
	c.Get("/wasm/panic").Do().AssertError(502, "FX_WASM_ERROR")
}
