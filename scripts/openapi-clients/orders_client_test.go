package clients_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOrdersClientProgram runs cmd/orders-client, the ogen client of
// examples/orders under fx/client that docs/clients.md shows, against the
// live example: it creates an order (201, its Location typed), gets the
// typed 404 and the typed issues of a 422. The page must show the
// program as it is.
func TestOrdersClientProgram(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("cmd", "orders-client", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "clients.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, program, _ := strings.Cut(string(src), "package main")
	if !strings.Contains(string(page), "```go\npackage main"+program+"```\n") {
		t.Errorf("docs/clients.md does not show cmd/orders-client/main.go as it is (from its package clause on)")
	}

	ex := startExample(t, "orders")
	cmd := exec.Command("go", "run", "./cmd/orders-client")
	cmd.Env = append(os.Environ(), "ORDERS_URL="+ex.base)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run ./cmd/orders-client: %v\n%s", err, out)
	}
	want := "created ord_1 at /orders/ord_1\n" +
		"not found: APP_ORDER_NOT_FOUND No such order\n" +
		"invalid: body customer: Required\n" +
		"invalid: body lines: Must have at least 1 item\n"
	if string(out) != want {
		t.Errorf("cmd/orders-client printed\n%s\nwant\n%s", out, want)
	}
}
