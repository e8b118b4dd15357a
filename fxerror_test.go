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
