package validate_test

import (
	"testing"

	"github.com/fxhq/fx/validate"
	gojson "github.com/goccy/go-json"
)

var benchOrder = []byte(`{"item":"book","quantity":2,"email":"ada@example.com"}`)

func BenchmarkDecodeJSON(b *testing.B) {
	b.Run("validate.DecodeJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			validate.DecodeJSON(benchOrder)
		}
	})
	b.Run("go-json.Unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v any
			gojson.Unmarshal(benchOrder, &v)
		}
	})
	b.Run("validate.CheckJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			validate.CheckJSON(benchOrder)
		}
	})
}
