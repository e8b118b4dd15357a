package middleware_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoJWTLibrary: importing package middleware (for CORS, rate limiting,
// security headers) or the test client fxtest must not link a JWT library;
// the JWT verifier lives in package middleware/jwt and the test signer in
// middleware/jwt/jwttest, which only their users import. It asks the go
// command for the packages' dependencies (tests excluded), as a user's
// build would resolve them.
func TestNoJWTLibrary(t *testing.T) {
	gobin, err := exec.LookPath("go") // go test puts its own go first on PATH
	if err != nil {
		t.Fatalf("the go command is needed to list the dependencies: %v", err)
	}
	for _, pkg := range []string{"github.com/fxhq/fx/middleware", "github.com/fxhq/fx/fxtest"} {
		out, err := exec.Command(gobin, "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 10 || !strings.Contains(string(out), "github.com/fxhq/fx\n") {
			t.Fatalf("go list -deps %s printed an implausible list:\n%s", pkg, out)
		}
		for _, p := range deps {
			if strings.Contains(strings.ToLower(p), "jwt") || strings.Contains(p, "jose") {
				t.Errorf("package %s depends on %s: JWT code belongs in middleware/jwt and middleware/jwt/jwttest", pkg, p)
			}
		}
	}
}
