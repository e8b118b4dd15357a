package validate_test

import (
	"testing"
	"time"

	"github.com/fxhq/fx/validate"
	"github.com/fxhq/fx/validate/validatetest"
)

// TestGrammarCheckers: the built-in Decoders check the grammar
// themselves (fx hands them the body without CheckJSON) and answer every
// malformed body with CheckJSON's one issue, on both of their paths:
// Struct's one pass (and its null shortcut, which once took "\vnull" for
// null), the builders' walk (`[1,2` once looped forever looking for its
// bracket), a Query object's tree.
func TestGrammarCheckers(t *testing.T) {
	t.Parallel()
	type line struct {
		SKU string `json:"sku" validate:"required"`
	}
	type order struct {
		A     int    `json:"a"`
		Items []line `json:"items" validate:"dive"`
	}
	item := validate.Object(validate.Fields{"a": validate.Integer()})
	for name, d := range map[string]validate.Decoder{
		"Array":       validate.Array(item.Strict()),
		"Object":      item,
		"Query":       validate.Query(validate.Fields{"a": validate.Integer()}),
		"Struct":      validate.Struct[order](),
		"QueryStruct": validate.QueryStruct[order](),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			done := make(chan error, 1)
			go func() { done <- validatetest.CheckGrammar(d, validatetest.MalformedBodies()...) }()
			select {
			case err := <-done:
				if err != nil {
					t.Error(err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("a ValidateJSON did not return")
			}
		})
	}
}
