package fx_test

import (
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	gojson "github.com/goccy/go-json"
)

func TestUndecodableDetails(t *testing.T) {
	cyc := &cyclicDetails{Name: "c"}
	cyc.Next = cyc
	cases := map[string]any{
		"chan":           map[string]any{"ch": make(chan int)},
		"func":           []any{func() {}},
		"cycle":          cyc,
		"marshalPanic":   badJSON{Mode: "panic"},
		"marshalError":   badJSON{Mode: "error"},
		"marshalInvalid": badJSON{Mode: "invalid"},
		"nestedPanic":    map[string]any{"ok": 1, "bad": badJSON{Mode: "panic"}},
	}
	app, logs := newLogged()
	app.Get("/details/:case", func(c *fx.Ctx) error {
		return fx.NewError(400, "APP_BAD_DETAILS", "Bad details", cases[c.Param("case")])
	})
	app.Get("/json/:case", func(c *fx.Ctx) error { return c.JSON(200, cases[c.Param("case")]) })
	for name := range cases {
		t.Run(name, func(t *testing.T) {
			w := do(t, app, "GET", "/details/"+name, "")
			env, err := fxtest.CheckEnvelope(w.status, w.header, w.body, map[string]int{"APP_BAD_DETAILS": 400})
			if err != nil {
				t.Fatal(err)
			}
			if env.Code != "APP_BAD_DETAILS" || env.Message != "Bad details" {
				t.Fatalf("envelope changed: %q", w.body)
			}
			if env.Details != nil {
				t.Fatalf("undecodable details sent anyway: %s", env.Details)
			}
			if m := leakyText(string(w.body)); m != "" {
				t.Fatalf("leaks %q: %q", m, w.body)
			}
			// c.JSON with the same value: the handler gets an error and
			// returns it, so the client gets the production 500.
			w = do(t, app, "GET", "/json/"+name, "")
			mustEnvelope(t, w, 500, fx.ErrorCodes.InternalError)
		})
	}
	if !strings.Contains(logs.String(), "fx: error details") {
		t.Fatalf("undecodable details were not logged: %s", logs)
	}
}

// Envelope exactness: details only when present; the exact bytes.
func TestEnvelopeExactBytes(t *testing.T) {
	app := quiet()
	app.Get("/plain", func(c *fx.Ctx) error { return fx.NewError(400, "APP_X", "m") })
	app.Get("/nil", func(c *fx.Ctx) error { return fx.NewError(400, "APP_X", "m", nil) })
	app.Get("/emptymap", func(c *fx.Ctx) error { return fx.NewError(400, "APP_X", "m", map[string]any{}) })
	app.Get("/emptystruct", func(c *fx.Ctx) error { return fx.NewError(400, "APP_X", "m", struct{}{}) })
	app.Get("/nilslice", func(c *fx.Ctx) error { return fx.NewError(400, "APP_X", "m", []string(nil)) })
	app.Get("/nilptr", func(c *fx.Ctx) error { return fx.NewError(400, "APP_X", "m", (*struct{ A int })(nil)) })
	app.Get("/details", func(c *fx.Ctx) error {
		return fx.NewError(400, "APP_X", "m", map[string]any{"a": []int{1}})
	})
	plain := `{"error":{"code":"APP_X","message":"m"}}`
	for p, want := range map[string]string{
		"/plain": plain, "/nil": plain, "/emptymap": plain, "/emptystruct": plain,
		"/nilslice": plain, "/nilptr": plain,
		"/details": `{"error":{"code":"APP_X","message":"m","details":{"a":[1]}}}`,
	} {
		r := do(t, app, "GET", p, "")
		mustEnvelope(t, r, 400, "APP_X")
		if string(r.body) != want {
			t.Errorf("%s: body %s, want %s", p, r.body, want)
		}
	}
	if got := string(fx.AppendEnvelope(nil, fx.NewError(404, "FX_NOT_FOUND", "Route GET / not found"))); got != `{"error":{"code":"FX_NOT_FOUND","message":"Route GET / not found"}}` {
		t.Errorf("AppendEnvelope = %s", got)
	}
}

// The body is always valid JSON whatever the message, path or panic value
// holds: quotes, control characters, invalid UTF-8, U+2028.
func TestEnvelopeEscaping(t *testing.T) {
	nasty := []string{
		`"quoted" \back\slash`, "ctl\x00\x01\x1f\x7f\n\r\t", "bad\xff\xfeutf8", "ls\u2028ps\u2029",
		"</script><!--", "emoji 😀 and \xed\xa0\x80 surrogate",
	}
	for _, s := range nasty {
		e := fx.NewError(400, "APP_"+s, s, map[string]string{s: s})
		b := fx.AppendEnvelope(nil, e)
		env := checkEnvelopeBody(t, b, "")
		if strings.Contains(string(b), "\u2028") || strings.Contains(string(b), "\u2029") {
			t.Errorf("%q: raw U+2028/2029 in %q", s, b)
		}
		if strings.ToValidUTF8(s, "\uFFFD") == s && env.Message != s {
			t.Errorf("message round trip %q -> %q", s, env.Message)
		}
	}

	for _, dev := range []bool{false, true} {
		app := quiet(fx.Config{Development: dev})
		app.Use(func(c *fx.Ctx, next fx.Next) error { return next() }) // 404 via the chain too
		app.Get("/panic/:i", func(c *fx.Ctx) error {
			i, _ := strconv.Atoi(c.Param("i"))
			panic(nasty[i])
		})
		app.Get("/err/:i", func(c *fx.Ctx) error {
			i, _ := strconv.Atoi(c.Param("i"))
			return errors.New(nasty[i])
		})
		h := app.Handler()
		for i, s := range nasty {
			for _, p := range []string{"/panic/" + strconv.Itoa(i), "/err/" + strconv.Itoa(i)} {
				rc := serveRaw(h, "GET", p)
				checkEnvelopeBody(t, rc.Response.Body(), fx.ErrorCodes.InternalError)
			}
			// The request path itself, raw, in the 404 message (a path with
			// a backslash is refused before routing: 400, see path.go).
			rc := serveRaw(h, "GET", "/nf/"+s)
			env := checkEnvelopeBody(t, rc.Response.Body(), nfCode(s))
			if nfCode(s) == fx.ErrorCodes.NotFound &&
				(!strings.HasPrefix(env.Message, "Route GET ") || !strings.HasSuffix(env.Message, " not found")) {
				t.Errorf("404 message %q", env.Message)
			}
			rc = serveRaw(h, s, "/x")
			checkEnvelopeBody(t, rc.Response.Body(), fx.ErrorCodes.NotFound)
		}
	}
	// Without middleware the 404 takes the direct path: same guarantees.
	h := quiet().Handler()
	for _, s := range nasty {
		checkEnvelopeBody(t, serveRaw(h, "GET", "/nf/"+s).Response.Body(), nfCode(s))
		checkEnvelopeBody(t, serveRaw(h, s, "/nf").Response.Body(), fx.ErrorCodes.NotFound)
	}
}

// nfCode is the code of an unmatched GET /nf/+s: 404, or 400 when s holds
// a backslash (refused before routing, see path.go).
func nfCode(s string) string {
	if strings.ContainsRune(s, '\\') {
		return fx.ErrorCodes.BadRequest
	}
	return fx.ErrorCodes.NotFound
}

type badMarshaler struct{ panics bool }

func (b badMarshaler) MarshalJSON() ([]byte, error) {
	if b.panics {
		panic("marshal exploded")
	}
	return nil, errors.New("marshal refused")
}

type cyclic struct {
	Name string
	Next *cyclic
}

// Details that cannot be encoded still give a valid envelope (without
// details) and a log line.
func TestDetailsEncodingFailure(t *testing.T) {
	loop := &cyclic{Name: "a"}
	loop.Next = loop
	cycMap := map[string]any{"k": 1}
	cycMap["self"] = cycMap
	cases := map[string]any{
		"channel":       make(chan int),
		"func":          func() {},
		"cycle":         loop,
		"map cycle":     cycMap,
		"marshal panic": badMarshaler{panics: true},
		"marshal error": badMarshaler{},
		"nested chan":   map[string]any{"ok": 1, "bad": make(chan int)},
	}
	for name, details := range cases {
		t.Run(name, func(t *testing.T) {
			app, logs := newLogged()
			app.Get("/", func(c *fx.Ctx) error { return fx.NewError(400, "APP_D", "with details", details) })
			r := do(t, app, "GET", "/", "")
			mustEnvelope(t, r, 400, "APP_D")
			if string(r.body) != `{"error":{"code":"APP_D","message":"with details"}}` {
				t.Errorf("body %s", r.body)
			}
			if !strings.Contains(logs.String(), "details") {
				t.Errorf("encoding failure not logged: %s", logs)
			}
			// And again: the encoders are still healthy afterwards.
			mustEnvelope(t, do(t, app, "GET", "/", ""), 400, "APP_D")
			if b := fx.AppendEnvelope(nil, fx.NewError(400, "APP_OK", "m", map[string]int{"n": 1})); string(b) != `{"error":{"code":"APP_OK","message":"m","details":{"n":1}}}` {
				t.Errorf("encoder broken after failure: %s", b)
			}
		})
	}
}

// Details with invalid UTF-8 or U+2028 are still valid JSON.
func TestDetailsEscaping(t *testing.T) {
	d := map[string]any{"bad\xff": "v\xfe\u2028", "ctl": "\x00\n"}
	b := fx.AppendEnvelope(nil, fx.NewError(400, "APP_X", "m", d))
	env := checkEnvelopeBody(t, b, "APP_X")
	if env.Details == nil {
		t.Fatalf("details dropped: %s", b)
	}
	if strings.Contains(string(b), "\u2028") {
		t.Errorf("raw U+2028 in %q", b)
	}
	// Valid UTF-8 (the go-json path): U+2028/U+2029 are escaped too.
	b = fx.AppendEnvelope(nil, fx.NewError(400, "APP_X", "m", map[string]string{"k\u2028": "v\u2029"}))
	if string(b) != `{"error":{"code":"APP_X","message":"m","details":{"k\u2028":"v\u2029"}}}` {
		t.Errorf("got %s", b)
	}
}

// Every byte value at every position of strings around the 8-byte word
// size: the envelope is valid JSON and the message decodes to what
// encoding/json makes of it (exact for valid UTF-8; each invalid byte
// becomes U+FFFD). Every length from 1 to 19 with FX_SLOW_TESTS=1 (.ci/run
// sets it); otherwise the lengths either side of one and two words.
func TestEscaperEveryBytePosition(t *testing.T) {
	t.Parallel()
	lengths := []int{1, 7, 8, 9, 16, 17}
	if os.Getenv("FX_SLOW_TESTS") != "" {
		lengths = lengths[:0]
		for n := 1; n <= 19; n++ {
			lengths = append(lengths, n)
		}
	}
	for _, n := range lengths {
		for pos := range n {
			for b := range 256 {
				buf := []byte(strings.Repeat("a", n))
				buf[pos] = byte(b)
				s := string(buf)
				out := fx.AppendEnvelope(nil, &fx.Error{Code: "C", Message: s})
				env, err := fxtest.CheckEnvelopeBody(out)
				if err != nil {
					t.Fatalf("n=%d pos=%d byte=%#x: %v", n, pos, b, err)
				}
				if want := stdDecoded(s); env.Message != want {
					t.Fatalf("n=%d pos=%d byte=%#x: message %q, want %q", n, pos, b, env.Message, want)
				}
				if b < 0x20 || b == '"' || b == '\\' {
					if strings.ContainsRune(string(out), rune(b)) && b != '"' && b != '\\' {
						t.Fatalf("raw control byte %#x in %q", b, out)
					}
				}
			}
		}
	}
	// Multi-byte runes straddling the word boundary.
	for pad := range 9 {
		for _, r := range []string{"é", "€", "😀", "\u2028", "\u2029", "\xed\xa0\x80", "\xf4\x90\x80\x80"} {
			s := strings.Repeat("x", pad) + r + strings.Repeat("y", 9)
			out := fx.AppendEnvelope(nil, &fx.Error{Code: "C", Message: s})
			env, err := fxtest.CheckEnvelopeBody(out)
			if err != nil {
				t.Fatalf("pad=%d %q: %v", pad, r, err)
			}
			if want := stdDecoded(s); env.Message != want {
				t.Fatalf("pad=%d %q: message %q, want %q", pad, r, env.Message, want)
			}
			if strings.ContainsAny(string(out), "\u2028\u2029") {
				t.Fatalf("raw U+2028/9 in %q", out)
			}
		}
	}
}

// stdDecoded is s after an encoding/json round trip.
func stdDecoded(s string) string {
	b, _ := json.Marshal(s)
	var out string
	_ = json.Unmarshal(b, &out)
	return out
}

// The details of FX_VALIDATION_ERROR, written without go-json, are the
// bytes go-json writes for them: every byte value, invalid UTF-8,
// U+2028/U+2029, a nil path, no issues.
func TestValidationDetailsAsGoJSON(t *testing.T) {
	var strs []string
	for b := range 256 {
		strs = append(strs, "a"+string([]byte{byte(b)})+"b")
	}
	strs = append(strs, "x\u2028y\u2029z", "é中😀", "\xed\xa0\x80", "\xf0\x9f\x98", "abcdefgh\x01ijklmnop\bq\fr", "")
	var issues []fx.ValidationIssue
	for _, s := range strs {
		issues = append(issues, fx.ValidationIssue{Location: s, Path: []string{s, "0"}, Message: s})
	}
	issues = append(issues, fx.ValidationIssue{Location: "body", Message: "nil path"})
	for _, list := range [][]fx.ValidationIssue{issues, nil, {}} {
		got := fx.AppendEnvelope(nil, fx.NewValidationError(list))
		if list == nil {
			list = []fx.ValidationIssue{}
		}
		var buf strings.Builder
		enc := gojson.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(struct {
			Issues    []fx.ValidationIssue `json:"issues"`
			Truncated bool                 `json:"truncated,omitempty"`
		}{Issues: list}); err != nil {
			t.Fatal(err)
		}
		want := `{"error":{"code":"FX_VALIDATION_ERROR","message":"Request validation failed","details":` +
			strings.TrimSuffix(buf.String(), "\n") + `}}`
		if string(got) != want {
			t.Fatalf("%d issues:\n got %q\nwant %q", len(list), got, want)
		}
	}
}
