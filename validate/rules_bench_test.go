package validate_test

import (
	"testing"

	"github.com/fxhq/fx/validate"
)

// BenchmarkStructConstraints: Struct[order] over the bytes, valid and
// failing, with its constraint tags and with TypesOnly (the difference is
// the cost of the constraints).
func BenchmarkStructConstraints(b *testing.B) {
	valid := []byte(`{"customer":"ada","quantity":2,"items":[{"name":"tea","price":2.5},{"name":"cup","price":4}]}`)
	invalid := []byte(`{"customer":"a very long name","quantity":1.5,"items":[{"name":"x","price":2.5},{"name":"cup","price":-4}]}`)
	for _, c := range []struct {
		name string
		s    *validate.StructSchema[order]
		body []byte
	}{
		{"rules/valid", validate.Struct[order](), valid},
		{"types-only/valid", validate.Struct[order](validate.TypesOnly()), valid},
		{"rules/422", validate.Struct[order](), invalid},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.s.ValidateJSONLimit(c.body, 101)
			}
		})
	}
}
