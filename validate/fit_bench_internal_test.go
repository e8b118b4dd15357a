package validate

import (
	"reflect"
	"testing"

	json "github.com/goccy/go-json"
)

// benchTyped is the typed endpoint's body type of bench/typed.go.
type benchTyped struct {
	Customer string           `json:"customer" validate:"required,max=80"`
	Email    string           `json:"email,omitempty" validate:"omitempty,email"`
	Lines    []benchTypedLine `json:"lines" validate:"required,min=1,max=50,dive"`
}

type benchTypedLine struct {
	SKU string `json:"sku" validate:"required,min=3,alphanum"`
	Qty int    `json:"qty" validate:"gte=1,lte=100"`
}

var benchTypedValid = []byte(`{"customer":"Ada Lovelace","email":"ada@example.com","lines":[{"sku":"A100","qty":2},{"sku":"B200","qty":1}]}`)

// BenchmarkTypedBody splits the valid body's binding into its passes.
func BenchmarkTypedBody(b *testing.B) {
	td := NewTypeDecoder(reflect.TypeFor[benchTyped]())
	b.Run("CheckJSON", func(b *testing.B) {
		for b.Loop() {
			CheckJSON(benchTypedValid)
		}
	})
	b.Run("typeFits", func(b *testing.B) {
		for b.Loop() {
			typeFits(td.d, newCursor(benchTypedValid))
		}
	})
	b.Run("go-json", func(b *testing.B) {
		for b.Loop() {
			var v benchTyped
			json.Unmarshal(benchTypedValid, &v)
		}
	})
	var v benchTyped
	json.Unmarshal(benchTypedValid, &v)
	b.Run("plan", func(b *testing.B) {
		for b.Loop() {
			td.plan.run(reflect.ValueOf(&v).UnsafePointer(), nil, 101, nil)
		}
	})
	b.Run("DecodeInto", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v benchTyped
			CheckJSON(benchTypedValid)
			td.DecodeInto(benchTypedValid, &v, 101)
		}
	})
}

func BenchmarkTypedCheck(b *testing.B) {
	td := NewTypeDecoder(reflect.TypeFor[benchTyped]())
	b.Run("two-pass", func(b *testing.B) {
		for b.Loop() {
			if CheckJSON(benchTypedValid) != nil || !typeFits(td.d, newCursor(benchTypedValid)) {
				b.Fatal("refused")
			}
		}
	})
	b.Run("one-pass", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if fits, err := td.CheckJSON(benchTypedValid); !fits || err != nil {
				b.Fatal("refused")
			}
		}
	})
}
