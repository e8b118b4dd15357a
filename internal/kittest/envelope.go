package kittest

import (
	"net/http"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
)

// CheckEnvelope checks that a response is exactly the error envelope of
// code, sent with status, in the wire format fxtest.CheckEnvelope checks
// (the one check of it: content type, shape, catalog status), and returns
// it decoded. code is a catalog code, or an application's code expected
// with status; "" accepts any catalog code. A body that is not an
// envelope fails the test at once; a wrong status or code is reported.
func CheckEnvelope(t testing.TB, status int, header http.Header, body []byte, code string) fxtest.Envelope {
	t.Helper()
	var appCodes map[string]int
	if _, catalog := fx.ErrorStatus[code]; !catalog && code != "" {
		appCodes = map[string]int{code: status}
	}
	env, err := fxtest.CheckEnvelope(status, header, body, appCodes)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if code != "" && env.Code != code {
		t.Errorf("code = %q, want %q (body %q)", env.Code, code, body)
	}
	return env
}
