package fx

import (
	"reflect"
	"testing"
)

// The package's own form of the catalog (its constants, allCodes and
// statusOf, what the framework reads while serving) says what the
// exported ErrorCodes and ErrorStatus say, and nothing more.
func TestCatalogFormsAgree(t *testing.T) {
	v := reflect.ValueOf(ErrorCodes)
	if v.NumField() != len(allCodes) {
		t.Fatalf("ErrorCodes has %d fields, allCodes %d codes", v.NumField(), len(allCodes))
	}
	for i, code := range allCodes {
		if got := v.Field(i).String(); got != code {
			t.Errorf("ErrorCodes.%s = %q, allCodes[%d] = %q", v.Type().Field(i).Name, got, i, code)
		}
	}
	if len(ErrorStatus) != len(allCodes) {
		t.Errorf("ErrorStatus has %d codes, allCodes %d", len(ErrorStatus), len(allCodes))
	}
	for code, want := range ErrorStatus {
		if got, ok := statusOf(code); !ok || got != want {
			t.Errorf("statusOf(%s) = %d, %v; ErrorStatus says %d", code, got, ok, want)
		}
	}
	for _, code := range []string{"", "FX_NOPE", "APP_X", "fx_not_found"} {
		if s, ok := statusOf(code); ok {
			t.Errorf("statusOf(%q) = %d, true; want false", code, s)
		}
	}
}
