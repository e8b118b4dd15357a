package jsonschema_test

import (
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/validate/adapters/jsonschema"
	"github.com/fxhq/fx/validate/validatetest"
)

// TestGrammarChecker: the adapter checks the grammar itself, so fx hands
// it the body as it came: every malformed body gets CheckJSON's one
// issue (the path of a duplicate key included), the large ones on the
// bounded pre-pass's path too (it checks the grammar before it walks the
// bytes); and fx does not check a body before it: behind fx's check,
// serving a body of 330,000 keys costs one check more (with a limit too
// high for the pre-pass, the adapter's own check is DecodeJSON's).
func TestGrammarChecker(t *testing.T) {
	s := jsonschema.MustCompile(orderSchema)
	if err := validatetest.CheckGrammar(s, validatetest.MalformedBodies()...); err != nil {
		t.Error(err)
	}
	body := validatetest.ManyKeysBody(`"name":"x","items":[{"sku":"a","qty":1}]`, 330_000)
	alone, behind, check := kittest.GrammarChecks(t, fx.Config{MaxIssues: 1 << 20}, s, body)
	if behind < alone+check/2 {
		t.Errorf("behind fx's check, serving allocated %d bytes, alone %d: the check of fx is not counted (one is %d)", behind, alone, check)
	}
}
