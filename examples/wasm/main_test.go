package main

import (
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
	app := newApp(module)
	if err := app.Boot(); err != nil {
		t.Fatal(err)
	}
	defer app.Shutdown()
	for _, tc := range []struct {
		method, path, body, want string
		status                   int
	}{
		{"GET", "/wasm/hello", "", "Hello from a Go guest!\n", 200},
		{"GET", "/wasm/greet/A%22da", "", `{"greeting":"Hello, A\"da!"}`, 200},
		{"POST", "/wasm/reverse", "stressed", "desserts", 200},
		{"GET", "/wasm/panic", "", `"code":"FX_WASM_ERROR"`, 502},
	} {
		resp, err := app.Test(httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body)))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.want) {
			t.Errorf("%s %s: %d %s", tc.method, tc.path, resp.StatusCode, b)
		}
	}
}
