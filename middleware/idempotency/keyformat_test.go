package idempotency_test

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/middleware/idempotency"
	"github.com/fxhq/fx/openapi"
)

// keySchema is the schema the document gives the Idempotency-Key header
// of POST /orders in app.
func keySchema(t *testing.T, app *fx.App) map[string]any {
	t.Helper()
	doc, err := openapi.Generate(app, openapi.Config{})
	if err != nil {
		t.Fatal(err)
	}
	op := doc["paths"].(map[string]any)["/orders"].(map[string]any)["post"].(map[string]any)
	for _, p := range op["parameters"].([]any) {
		if p := p.(map[string]any); p["name"] == idempotency.HeaderKey {
			return p["schema"].(map[string]any)
		}
	}
	t.Fatalf("POST /orders documents no %s", idempotency.HeaderKey)
	return nil
}

// documentedValid reports whether v fits schema as a JSON Schema
// validator reads it: pattern (re), minLength and maxLength (in
// characters).
func documentedValid(schema map[string]any, re *regexp.Regexp, v string) bool {
	n := utf8.RuneCountInString(v)
	if minLen, ok := schema["minLength"].(int); ok && n < minLen {
		return false
	}
	if maxLen, ok := schema["maxLength"].(int); ok && n > maxLen {
		return false
	}
	return re.MatchString(v)
}

// generatedKeys are Idempotency-Key values a client might send: random
// strings over an alphabet of the bytes the format treats apart (space,
// tab, quote, backslash, control bytes, DEL, non-ASCII), bare and quoted,
// around the length limit, with the hand-picked cases first.
func generatedKeys() []string {
	keys := []string{
		"8e03978e-40d5-43e8-bc93-6894a57f9324", `"8e03978e-40d5-43e8-bc93-6894a57f9324"`,
		"a b", "a\tb", `a\b`, "café", "\x7f", `""`, `"a`, `"a"b"`, `"a\x"`, `"a b"`, `"a\"b"`, `"a\\b"`, `a"b`,
		strings.Repeat("a", 254), strings.Repeat("a", 255), strings.Repeat("a", 256),
		`"` + strings.Repeat("a", 255) + `"`, `"` + strings.Repeat("a", 256) + `"`,
		`"` + strings.Repeat(`\"`, 255) + `"`, `"` + strings.Repeat(`\\`, 256) + `"`,
		`"` + strings.Repeat(" ", 255) + `"`,
	}
	alphabet := []string{"a", "Z", "0", "-", "~", "!", " ", "\t", `"`, `\`, "\x01", "\x7f", "é", "\xff", "€"}
	rng := rand.New(rand.NewPCG(44, 9))
	for range 1500 {
		var b strings.Builder
		quoted := rng.IntN(2) == 0
		if quoted {
			b.WriteByte('"')
		}
		n := rng.IntN(8)
		if rng.IntN(10) == 0 {
			n = 250 + rng.IntN(10) // around the limit
		}
		for range n {
			if rng.IntN(4) == 0 {
				b.WriteString(alphabet[rng.IntN(len(alphabet))])
			} else {
				b.WriteByte(byte('a' + rng.IntN(26)))
			}
		}
		if quoted && rng.IntN(8) != 0 {
			b.WriteByte('"')
		}
		keys = append(keys, b.String())
	}
	return keys
}

// The document states the format the server enforces: for every
// generated key, the Idempotency-Key schema of the document (pattern,
// minLength, maxLength) accepts it exactly when the server does, and
// the server refuses every other one with 400 FX_IDEMPOTENCY_KEY_REQUIRED
// (reason malformed_idempotency_key), held by the strict test client.
func TestDocumentedKeyFormatIsEnforced(t *testing.T) {
	app := quietApp()
	app.Use(idempotency.New(idempotency.Config{ShareAnonymous: true}))
	app.Route(fx.Route{Method: "POST", Path: "/orders", Responses: []fx.ResponseDoc{{Status: 201}},
		Handler: func(c *fx.Ctx) error { return c.NoContent(201) }})
	schema := keySchema(t, app)
	pattern, ok := schema["pattern"].(string)
	if !ok {
		t.Fatalf("the Idempotency-Key schema states no pattern: %v", schema)
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		t.Fatalf("pattern %q: %v", pattern, err)
	}
	client := fxtest.New(t, app, fxtest.Strict())
	accepted := 0
	for _, key := range generatedKeys() {
		doc := documentedValid(schema, re, key)
		_, parsed := idempotency.ParseKey([]byte(key))
		if doc != parsed {
			t.Errorf("key %q: the document accepts it: %v; ParseKey: %v", key, doc, parsed)
		}
		if key != strings.Trim(key, " \t") || strings.ContainsFunc(key, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
			// Not a field value (HTTP strips the whitespace around one;
			// control bytes are refused before routing, 400 FX_BAD_REQUEST).
			continue
		}
		resp := client.Post("/orders").Header(idempotency.HeaderKey, key).Do()
		switch code, reason := envelope(resp.Body); {
		case doc && resp.Status == 201:
			accepted++
		case !doc && resp.Status == 400 && code == fx.ErrorCodes.IdempotencyKeyRequired && reason == idempotency.ReasonMalformedKey:
		default:
			t.Errorf("key %q (documented valid: %v): the server answered %d %s", key, doc, resp.Status, resp.Body)
		}
	}
	if accepted < 100 {
		t.Fatalf("only %d generated keys were valid: the generator is off", accepted)
	}
}
