package fx_test

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fxhq/fx"
)

// wantCatalog is the whole catalog (docs/errors.md lists it): the 11 core
// codes (routing, validation, auth, tenancy, plugins, Wasm, the chain), and
// the extensions for plugin cycles, transport errors, capacity, rate
// limits, deadlines and idempotency keys.
var wantCatalog = map[string]int{
	// The core.
	"FX_NOT_FOUND":                  404,
	"FX_INTERNAL_ERROR":             500,
	"FX_VALIDATION_ERROR":           422,
	"FX_UNAUTHENTICATED":            401,
	"FX_FORBIDDEN":                  403,
	"FX_TENANT_REQUIRED":            400,
	"FX_PLUGIN_MISSING_DEPENDENCY":  500,
	"FX_WASM_ERROR":                 502,
	"FX_ROUTE_HANDLER_REQUIRED":     500,
	"FX_NEXT_CALLED_MULTIPLE_TIMES": 500,
	"FX_NODE_INTERNAL_ERROR":        500,
	// Plugin dependencies.
	"FX_PLUGIN_DEPENDENCY_CYCLE": 500,
	// Transport errors.
	"FX_BAD_REQUEST":       400,
	"FX_PAYLOAD_TOO_LARGE": 413,
	"FX_REQUEST_TIMEOUT":   408,
	"FX_HEADERS_TOO_LARGE": 431,
	// Overload.
	"FX_SERVICE_UNAVAILABLE": 503,
	"FX_RATE_LIMITED":        429,
	"FX_TIMEOUT":             504,
	// Idempotency keys (docs/idempotency.md).
	"FX_IDEMPOTENCY_KEY_REUSED":   422,
	"FX_IDEMPOTENCY_IN_FLIGHT":    409,
	"FX_IDEMPOTENCY_KEY_REQUIRED": 400,
	"FX_UPGRADE_REQUIRED":         426,
}

// ErrorStatus lists exactly the built-in codes with their
// statuses, and ErrorCodes names each of them once.
func TestCatalogIsExact(t *testing.T) {
	if !reflect.DeepEqual(fx.ErrorStatus, wantCatalog) {
		t.Errorf("ErrorStatus = %v\nwant %v", fx.ErrorStatus, wantCatalog)
	}
	v := reflect.ValueOf(fx.ErrorCodes)
	seen := map[string]string{}
	for i := range v.NumField() {
		name, code := v.Type().Field(i).Name, v.Field(i).String()
		if _, ok := wantCatalog[code]; !ok {
			t.Errorf("ErrorCodes.%s = %q is not in the catalog", name, code)
		}
		if prev, dup := seen[code]; dup {
			t.Errorf("ErrorCodes.%s and .%s are both %q", prev, name, code)
		}
		seen[code] = name
		// The field name is the code in CamelCase: NotFound ↔ FX_NOT_FOUND.
		if want := "FX_" + upperSnake(name); want != code {
			t.Errorf("ErrorCodes.%s = %q, want %q", name, code, want)
		}
	}
	if len(seen) != len(wantCatalog) {
		t.Errorf("ErrorCodes has %d codes, the catalog %d", len(seen), len(wantCatalog))
	}
	for _, code := range slices.Sorted(maps.Keys(fx.ErrorStatus)) {
		t.Logf("%-32s %d", code, fx.ErrorStatus[code])
	}
}

func upperSnake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return strings.ToUpper(b.String())
}

// The codes the core raises itself carry the catalog status on the wire.
func TestCatalogStatusesOnTheWire(t *testing.T) {
	app := quiet()
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		if c.Path() == "/twice" {
			_ = next()
			return next()
		}
		return next()
	})
	app.Get("/twice", func(c *fx.Ctx) error { return nil })
	app.Get("/panic", func(c *fx.Ctx) error { panic("x") })
	app.Post("/body", func(c *fx.Ctx) error { _, err := fx.JSONBody[map[string]any](c); return err })
	for _, tc := range []struct{ method, path, code string }{
		{"GET", "/nope", fx.ErrorCodes.NotFound},
		{"GET", "/twice", fx.ErrorCodes.NextCalledMultipleTimes},
		{"GET", "/panic", fx.ErrorCodes.InternalError},
		{"POST", "/body", fx.ErrorCodes.ValidationError},
	} {
		mustEnvelope(t, do(t, app, tc.method, tc.path, ""), fx.ErrorStatus[tc.code], tc.code)
	}
}

// NewCatalogError pairs every code with the catalog's status, and any
// other code with 500.
func TestNewCatalogErrorStatus(t *testing.T) {
	for code, want := range wantCatalog {
		if e := fx.NewCatalogError(code, "m"); e.Status != want || e.Code != code {
			t.Errorf("NewCatalogError(%s) = %d %s", code, e.Status, e.Code)
		}
	}
	for _, code := range []string{"", "FX_NOPE", "APP_X", "fx_not_found"} {
		if e := fx.NewCatalogError(code, "m"); e.Status != 500 {
			t.Errorf("NewCatalogError(%q).Status = %d, want 500", code, e.Status)
		}
	}
}

// The framework never reads the exported, writable ErrorStatus map or
// ErrorCodes while serving: a program that writes to them changes nothing
// on the wire.
func TestCatalogMapIsNotReadWhileServing(t *testing.T) {
	saved := maps.Clone(fx.ErrorStatus)
	for code := range fx.ErrorStatus {
		fx.ErrorStatus[code] = 299
	}
	defer maps.Copy(fx.ErrorStatus, saved)
	savedCodes := fx.ErrorCodes
	fx.ErrorCodes.NotFound, fx.ErrorCodes.ValidationError = "APP_X", "APP_Y"
	defer func() { fx.ErrorCodes = savedCodes }()
	app := quiet()
	app.Post("/b", func(c *fx.Ctx) error { _, err := fx.JSONBody[map[string]any](c); return err })
	wireEnvelope(t, do(t, app, "GET", "/nope", ""), 404, "FX_NOT_FOUND")
	wireEnvelope(t, do(t, app, "POST", "/b", "{"), 422, "FX_VALIDATION_ERROR")
}
