package codecs_test

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fxhq/fx"
)

// This test binary imports neither github.com/fxhq/fx/compression/zstd nor
// .../brotli: it is the program that did not ask for them.

// TestUnlinkedCodingsAreNotOffered: without the imports the default
// Encodings is gzip alone, and a list naming zstd or br fails Boot with an
// error naming the package to import.
func TestUnlinkedCodingsAreNotOffered(t *testing.T) {
	app := fx.New(fx.Config{Compression: &fx.CompressionConfig{MinSize: 1}})
	app.Get("/", func(c *fx.Ctx) error { return c.String(200, strings.Repeat("hello ", 100)) })
	req := httptest.NewRequest("GET", "/", nil)
	req.Header.Set("Accept-Encoding", "zstd, br, gzip;q=0.1")
	resp, err := app.Test(req)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Header.Get("Content-Encoding"); got != "gzip" {
		t.Errorf("Content-Encoding %q, want gzip (the only coding linked)", got)
	}
	for name, pkg := range map[string]string{"br": "github.com/fxhq/fx/compression/brotli", "zstd": "github.com/fxhq/fx/compression/zstd"} {
		app := fx.New(fx.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Compression: &fx.CompressionConfig{Encodings: []string{name, "gzip"}}})
		err := app.Boot()
		if err == nil || !strings.Contains(err.Error(), pkg) {
			t.Errorf("Encodings [%s gzip] without the import: Boot said %v, want an error naming %s", name, err, pkg)
		}
	}
}

// TestHelloWorldLinks builds a hello-world service that compresses with
// gzip (testdata/gzip) and checks what it links: none of the packages a
// service that does not import them should carry (the zstd and brotli
// encoders, OpenAPI, the JWT library, the public-suffix list, WASM, the
// validation adapters). The same program importing the two codings
// (testdata/every) links their encoders, so the check can see them.
func TestHelloWorldLinks(t *testing.T) {
	if os.Getenv("FX_SLOW_TESTS") == "" || testing.Short() {
		t.Skip("slow test (builds and links two programs): FX_SLOW_TESTS=1 runs it (.ci/run sets it)")
	}
	absent := []string{
		"github.com/molecule-man/go-brrr", "github.com/klauspost/compress/zstd",
		"github.com/fxhq/fx/openapi", "github.com/fxhq/fx/middleware", "github.com/golang-jwt/jwt",
		"golang.org/x/net/publicsuffix", "github.com/tetratelabs/wazero", "github.com/fxhq/fx/wasm",
		"github.com/go-playground/validator", "github.com/santhosh-tekuri/jsonschema",
	}
	deps := goCmd(t, "list", "-deps", "./testdata/gzip")
	for _, p := range absent[2:] { // go-brrr and zstd are packages fasthttp imports; the linker drops them
		for _, d := range strings.Fields(deps) {
			if d == p || strings.HasPrefix(d, p+"/") {
				t.Errorf("a hello-world program depends on %s", d)
			}
		}
	}
	dir := t.TempDir()
	size := map[string]map[string]int{} // program -> package -> bytes of its symbols
	for _, prog := range []string{"gzip", "every"} {
		bin := filepath.Join(dir, prog)
		goCmd(t, "build", "-o", bin, "./testdata/"+prog)
		size[prog] = map[string]int{}
		for _, line := range strings.Split(goCmd(t, "tool", "nm", "-size", bin), "\n") {
			f := strings.Fields(line) // address size type name
			if len(f) < 4 {
				continue
			}
			n, _ := strconv.Atoi(f[1])
			for _, p := range absent {
				if strings.HasPrefix(f[3], p+".") || strings.HasPrefix(f[3], p+"/") {
					size[prog][p] += n
				}
			}
		}
	}
	for i, p := range absent {
		gzip, every := size["gzip"][p], size["every"][p]
		switch {
		case i < 2 && every == 0:
			t.Errorf("the program importing the codings links nothing of %s: the check is blind", p)
		case i < 2 && gzip > every/3:
			// What stays is the package's initialisation (fasthttp imports
			// it, so its init and the tables init fills are kept).
			t.Errorf("the gzip-only hello world links %d bytes of %s, the program importing the codings %d", gzip, p, every)
		case i >= 2 && gzip > 0:
			t.Errorf("the gzip-only hello world links %d bytes of %s", gzip, p)
		}
	}
	t.Logf("bytes linked, gzip only / every coding: %v / %v", size["gzip"], size["every"])
}

func goCmd(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
