package fx_test

import (
	"os"
	"path/filepath"
	"time"

	"github.com/fxhq/fx"
)

// Static serves a directory under a prefix. A missing file is the 404 of
// an unmatched route, and no encoding of ".." leaves the directory.
func ExampleApp_Static() {
	dir, _ := os.MkdirTemp("", "fx-static")
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello from disk"), 0o644)

	app := fx.New(fx.Config{Logger: silentLogger})
	app.Static("/assets", dir, fx.StaticConfig{MaxAge: time.Hour})

	show(app, "GET", "/assets/hello.txt", "")
	show(app, "GET", "/assets/missing.txt", "")
	show(app, "GET", "/assets/%2e%2e/etc/passwd", "")
	show(app, "GET", "/assets/..%2fetc/passwd", "")
	app.Shutdown()
	// Output:
	// 200 hello from disk
	// 404 {"error":{"code":"FX_NOT_FOUND","message":"Route GET /assets/missing.txt not found"}}
	// 404 {"error":{"code":"FX_NOT_FOUND","message":"Route GET /etc/passwd not found"}}
	// 400 {"error":{"code":"FX_BAD_REQUEST","message":"The request path holds an encoded '/', a '\\' or a double-encoded escape"}}
}
