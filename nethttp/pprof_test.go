package nethttp_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	_ "net/http/pprof" // registers its handlers on http.DefaultServeMux
	"slices"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/nethttp"
)

// pprofApp mounts net/http/pprof behind API-key authentication: the one
// line of the README's pprof section. Wrap hands pprof the full request
// path, so its own routing under /debug/pprof/ (pprof.Index and the
// cmdline, profile, symbol and trace handlers) works unchanged.
func pprofApp(keys *middleware.APIKeys) *fx.App {
	app := fx.New()
	app.Group("/debug/pprof", middleware.Auth(middleware.AuthConfig{APIKeys: keys})).Get("/*path", nethttp.Wrap(http.DefaultServeMux))
	return app
}

// ExampleWrap_pprof serves Go's profiler from an fx App, behind
// middleware.Auth, with the import _ "net/http/pprof".
func ExampleWrap_pprof() {
	keys, _ := middleware.NewAPIKeys(map[string]middleware.Principal{
		"example-operator-key-0123456789": {Subject: "operator"},
	})
	app := fx.New()
	app.Group("/debug/pprof", middleware.Auth(middleware.AuthConfig{APIKeys: keys})).Get("/*path", nethttp.Wrap(http.DefaultServeMux))

	req := httptest.NewRequest("GET", "/debug/pprof/heap?debug=1", nil)
	resp, _ := app.Test(req)
	fmt.Println("without a key:", resp.StatusCode)

	req.Header.Set("X-API-Key", "example-operator-key-0123456789")
	resp, _ = app.Test(req)
	body, _ := io.ReadAll(resp.Body)
	fmt.Println("with the key:", resp.StatusCode, strings.HasPrefix(string(body), "heap profile:"))
	// Output:
	// without a key: 401
	// with the key: 200 true
}

// TestPprofBehindAuth fetches profiles through the fx App (in memory,
// through its real server) with a valid key, in the text and the binary
// formats, and gets the 401 envelope without one or with a wrong one.
func TestPprofBehindAuth(t *testing.T) {
	const key = "operator-key-0123456789abcdef"
	keys, err := middleware.NewAPIKeys(map[string]middleware.Principal{key: {Subject: "operator"}})
	if err != nil {
		t.Fatal(err)
	}
	c := fxtest.New(t, pprofApp(keys))
	get := func(target string) *fxtest.Response {
		return c.Get(target).Header(middleware.DefaultAPIKeyHeader, key).Do().AssertStatus(200)
	}

	if body := string(get("/debug/pprof/").Body); !strings.Contains(body, "heap") || !strings.Contains(body, "goroutine") {
		t.Errorf("index does not list the profiles: %.200s", body)
	}
	heap := string(get("/debug/pprof/heap?debug=1").Body)
	if !strings.HasPrefix(heap, "heap profile: ") || !strings.Contains(heap, "# runtime.MemStats") {
		t.Errorf("heap?debug=1 is not the text heap profile: %.200s", heap)
	}
	if g := string(get("/debug/pprof/goroutine?debug=1").Body); !strings.HasPrefix(g, "goroutine profile: total ") {
		t.Errorf("goroutine?debug=1 is not the text goroutine profile: %.200s", g)
	}
	// The default format is a gzipped protocol buffer (what go tool pprof
	// reads); a 1 s CPU profile is one too.
	for target, sampleType := range map[string]string{"/debug/pprof/heap": "inuse_space", "/debug/pprof/profile?seconds=1": "cpu"} {
		r := get(target)
		if ct := r.Header().Get("Content-Type"); ct != "application/octet-stream" {
			t.Errorf("%s: Content-Type %q", target, ct)
		}
		zr, err := gzip.NewReader(bytes.NewReader(r.Body))
		if err != nil {
			t.Fatalf("%s: not gzip: %v", target, err)
		}
		proto, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("%s: gunzip: %v", target, err)
		}
		strs, err := profileStrings(proto)
		if err != nil {
			t.Fatalf("%s: not a protocol buffer: %v", target, err)
		}
		if !slices.Contains(strs, sampleType) {
			t.Errorf("%s: string table %q lacks the sample type %q", target, strs, sampleType)
		}
	}

	c.Get("/debug/pprof/heap?debug=1").Do().AssertError(401, fx.ErrorCodes.Unauthenticated)
	c.Get("/debug/pprof/").Do().AssertError(401, fx.ErrorCodes.Unauthenticated)
	c.Get("/debug/pprof/cmdline").Header(middleware.DefaultAPIKeyHeader, "fxtest_wrong-key-0123456789abcdef").Do().
		AssertError(401, fx.ErrorCodes.Unauthenticated)
}

// profileStrings walks a pprof Profile message in the protocol buffer wire
// format and returns its string table (field 6), failing on any malformed
// field.
func profileStrings(b []byte) ([]string, error) {
	var strs []string
	varint := func() (uint64, error) {
		var v uint64
		for shift := 0; shift < 64; shift += 7 {
			if len(b) == 0 {
				return 0, errors.New("truncated varint")
			}
			c := b[0]
			b = b[1:]
			v |= uint64(c&0x7f) << shift
			if c < 0x80 {
				return v, nil
			}
		}
		return 0, errors.New("varint too long")
	}
	for len(b) > 0 {
		tag, err := varint()
		if err != nil {
			return nil, err
		}
		switch tag & 7 {
		case 0:
			_, err = varint()
		case 1, 5:
			n := 8
			if tag&7 == 5 {
				n = 4
			}
			if len(b) < n {
				return nil, errors.New("truncated fixed field")
			}
			b = b[n:]
		case 2:
			var n uint64
			if n, err = varint(); err == nil && n > uint64(len(b)) {
				err = errors.New("truncated bytes field")
			}
			if err == nil {
				if tag>>3 == 6 {
					strs = append(strs, string(b[:n]))
				}
				b = b[n:]
			}
		default:
			err = fmt.Errorf("wire type %d", tag&7)
		}
		if err != nil {
			return nil, err
		}
	}
	return strs, nil
}
