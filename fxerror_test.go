package fx_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/fxhq/fx"
)

func TestErrorFormatting(t *testing.T) {
	e := fx.NewError(409, "APP_TAKEN", "Name taken", map[string]string{"name": "x"})
	for format, want := range map[string]string{
		"%v":   "APP_TAKEN (409): Name taken",
		"%s":   "APP_TAKEN (409): Name taken",
		"%q":   `"APP_TAKEN (409): Name taken"`,
		"%+v":  "APP_TAKEN (409): Name taken details=map[name:x]",
		"%30s": "   APP_TAKEN (409): Name taken",
	} {
		if got := fmt.Sprintf(format, e); got != want {
			t.Errorf("%s: %q, want %q", format, got, want)
		}
	}
	if got := e.Error(); got != "APP_TAKEN (409): Name taken" {
		t.Errorf("Error() = %q", got)
	}
	var nilErr *fx.Error
	if got := nilErr.Error(); got != "<nil *fx.Error>" {
		t.Errorf("nil Error() = %q", got)
	}
	if e2 := fx.NewError(400, "APP_A", "a"); e2.Details != nil {
		t.Errorf("Details = %v without details", e2.Details)
	}
}

func TestPanicError(t *testing.T) {
	inner := fx.NewError(400, "APP_IN", "in")
	pe := &fx.PanicError{Value: inner}
	if pe.Error() != "panic: APP_IN (400): in" {
		t.Errorf("Error() = %q", pe.Error())
	}
	var fe *fx.Error
	if !errors.As(pe, &fe) || fe != inner {
		t.Error("errors.As does not find the panicked *Error")
	}
	if (&fx.PanicError{Value: "x"}).Unwrap() != nil {
		t.Error("Unwrap of a non-error value is not nil")
	}
}

// NewValidationError keeps arrays arrays on the wire: no issues is
// "issues":[], and an issue without a path has "path":[], never null.
func TestNewValidationErrorNeverNull(t *testing.T) {
	for _, tc := range []struct {
		issues []fx.ValidationIssue
		want   string
	}{
		{nil, `{"error":{"code":"FX_VALIDATION_ERROR","message":"Request validation failed","details":{"issues":[]}}}`},
		{[]fx.ValidationIssue{{Location: "query", Message: "bad"}},
			`{"error":{"code":"FX_VALIDATION_ERROR","message":"Request validation failed","details":{"issues":[{"location":"query","path":[],"message":"bad"}]}}}`},
	} {
		e := fx.NewValidationError(tc.issues)
		if e.Status != 422 {
			t.Errorf("status %d", e.Status)
		}
		if got := string(fx.AppendEnvelope(nil, e)); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}

// TestErrorWith: With is a copy with new details (same status, code and
// message) that leaves the declared error unchanged; a prebuilt error
// stays prebuilt and allocation-free after With was used on it, and the
// copy is sent with its own details.
func TestErrorWith(t *testing.T) {
	declared := fx.NewError(404, "APP_ORDER_NOT_FOUND", "No such order", map[string]string{"id": ""}).Prebuild()
	before := declared.Details
	c := declared.With(map[string]string{"id": "ord_9"})
	if c == declared || c.Status != 404 || c.Code != "APP_ORDER_NOT_FOUND" || c.Message != "No such order" {
		t.Fatalf("With gave %+v", c)
	}
	if declared.Details.(map[string]string)["id"] != "" || fmt.Sprint(declared.Details) != fmt.Sprint(before) {
		t.Fatalf("With changed the declared error: %+v", declared)
	}
	if (*fx.Error)(nil).With(1) != nil {
		t.Error("nil.With is not nil")
	}
	if _, _, b := serveErr(t, c); b != `{"error":{"code":"APP_ORDER_NOT_FOUND","message":"No such order","details":{"id":"ord_9"}}}` {
		t.Errorf("the copy sent %s", b)
	}
	if _, _, b := serveErr(t, declared); b != `{"error":{"code":"APP_ORDER_NOT_FOUND","message":"No such order","details":{"id":""}}}` {
		t.Errorf("the declared error sent %s", b)
	}
	if testing.CoverMode() != "" || raceEnabled {
		return // allocation counts below
	}
	app := quiet()
	app.Get("/e", func(*fx.Ctx) error { return declared })
	_, serve := benchCtx(app.Handler(), "GET", "/e")
	for range 10 {
		serve()
	}
	if n := testing.AllocsPerRun(1000, serve); n != 0 {
		t.Errorf("the prebuilt error allocates %.1f per request after With", n)
	}
}
