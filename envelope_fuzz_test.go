package fx_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
)

// replaceInvalid is what the envelope encoder promises for a string:
// every byte of an invalid UTF-8 sequence becomes U+FFFD.
func replaceInvalid(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// FuzzAppendEnvelope encodes arbitrary code, message and details with
// fx.AppendEnvelope. The output must be one envelope in the wire format
// (fxtest.CheckEnvelopeBody) whose code and message decode to the input
// (invalid UTF-8 replaced), and whose details, when encodable and not
// empty, decode to the same value.
func FuzzAppendEnvelope(f *testing.F) {
	f.Add("APP_X", "hello", []byte(`{"a":[1,"b",null,true,{"c":1.5}]}`), uint8(0), "s")
	f.Add("\x00\"\\\n", "\xff\xfe\u2028\u2029</script>", []byte(`null`), uint8(0), "")
	f.Add("", "", []byte(`{}`), uint8(0), "")
	f.Add("C", "m", []byte(`[]`), uint8(0), "")
	f.Add("C", "m", []byte(`1e308`), uint8(0), "")
	f.Add("C", "m", []byte(`"x"`), uint8(1), "\xff\x00\"")
	f.Add("C", "m", []byte(``), uint8(2), "panic")
	f.Add("C", "m", []byte(``), uint8(2), "error")
	f.Add("C", "m", []byte(``), uint8(2), "invalid")
	f.Add("C", "m", []byte(``), uint8(3), "")
	f.Add("C", "m", []byte(``), uint8(4), "")
	f.Add("C", "m", []byte(``), uint8(5), "k\xff")
	f.Add("C", "m", []byte(``), uint8(6), "")
	f.Fuzz(func(t *testing.T, code, msg string, detailsJSON []byte, kind uint8, s string) {
		var details any
		var want any // the decoded details we expect; nil = no details key
		comparable := true
		switch kind % 7 {
		case 0: // any JSON value
			if err := json.Unmarshal(detailsJSON, &details); err != nil {
				details = nil
			}
			want = details
		case 1: // a string, possibly invalid UTF-8
			details = map[string]string{"s": s}
			want = map[string]any{"s": replaceInvalid(s)}
		case 2:
			details = badJSON{Mode: s}
			comparable = false
		case 3:
			details = map[string]any{"ch": make(chan int)}
			comparable = false
		case 4:
			c := &cyclicDetails{Name: s}
			c.Next = c
			details = c
			comparable = false
		case 5: // invalid UTF-8 in a key
			details = map[string]int{s: 1}
			want = map[string]any{replaceInvalid(s): float64(1)}
		case 6:
			details = []any{func() {}, s}
			comparable = false
		}
		var out []byte
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("AppendEnvelope panicked: %v", r)
				}
			}()
			out = fx.AppendEnvelope([]byte("prefix"), &fx.Error{Status: 400, Code: code, Message: msg, Details: details})
		}()
		if !bytes.HasPrefix(out, []byte("prefix")) {
			t.Fatalf("dst prefix lost: %q", out)
		}
		out = out[len("prefix"):]
		env, err := fxtest.CheckEnvelopeBody(out)
		if err != nil {
			t.Fatal(err)
		}
		if env.Code != replaceInvalid(code) || env.Message != replaceInvalid(msg) {
			t.Fatalf("code/message %q/%q decode to %q/%q", code, msg, env.Code, env.Message)
		}
		if bytes.ContainsAny(out, "\u2028\u2029") {
			t.Fatalf("U+2028/U+2029 not escaped: %q", out)
		}
		raw, has := env.Details, env.Details != nil
		if !comparable {
			return
		}
		if m, ok := want.(map[string]any); want == nil || ok && len(m) == 0 {
			if has {
				t.Fatalf("details %q present for empty value %#v", raw, details)
			}
			return
		}
		if !has {
			t.Fatalf("details missing for %#v: %q", details, out)
		}
		var got any
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("details not JSON: %q", raw)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("details %#v encode as %s, decode to %#v", details, raw, got)
		}
	})
}
