package middleware_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoJWTLibrary: importing package middleware (for CORS, rate limiting,
// security headers) must not link a JWT library; the JWT verifier lives in
// package middleware/jwt, which only its users import. It asks the go
// command for the package's dependencies (tests excluded), as a user's
// build would resolve them.
func TestNoJWTLibrary(t *testing.T) {
	gobin, err := exec.LookPath("go") // go test puts its own go first on PATH
	if err != nil {
		t.Fatalf("the go command is needed to list the dependencies: %v", err)
	}
	out, err := exec.Command(gobin, "list", "-deps", "github.com/fxhq/fx/middleware").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 || !strings.Contains(string(out), "github.com/fxhq/fx\n") {
		t.Fatalf("go list -deps printed an implausible list:\n%s", out)
	}
	for _, p := range deps {
		if strings.Contains(strings.ToLower(p), "jwt") || strings.Contains(p, "jose") {
			t.Errorf("package middleware depends on %s: JWT code belongs in package middleware/jwt", p)
		}
	}
}
