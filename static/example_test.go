package static_test

import (
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/static"
)

// Mount serves a directory under a prefix. A missing file is the 404 of
// an unmatched route, and no encoding of ".." leaves the directory.
func ExampleMount() {
	dir, _ := os.MkdirTemp("", "fx-static")
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello from disk"), 0o644)

	app := fx.New(fx.Config{Logger: silentLogger})
	static.Mount(app, "/assets", dir, static.Config{MaxAge: time.Hour})

	show(app, "/assets/hello.txt")
	show(app, "/assets/missing.txt")
	show(app, "/assets/%2e%2e/etc/passwd")
	show(app, "/assets/..%2fetc/passwd")
	app.Shutdown()
	// Output:
	// 200 hello from disk
	// 404 {"error":{"code":"FX_NOT_FOUND","message":"Route GET /assets/missing.txt not found"}}
	// 404 {"error":{"code":"FX_NOT_FOUND","message":"Route GET /etc/passwd not found"}}
	// 400 {"error":{"code":"FX_BAD_REQUEST","message":"The request path holds an encoded '/', a '\\' or a double-encoded escape"}}
}

// show prints the status and body of GET target.
func show(app *fx.App, target string) {
	resp, err := app.Test(httptest.NewRequest("GET", target, nil))
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(b))
}
