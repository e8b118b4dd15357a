package validate

import (
	"reflect"
	"testing"
	"unicode/utf8"

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
	td := must(compileType(reflect.TypeFor[benchTyped]()))
	b.Run("CheckJSON", func(b *testing.B) {
		for b.Loop() {
			CheckJSON(benchTypedValid)
		}
	})
	b.Run("fits", func(b *testing.B) {
		for b.Loop() {
			checkFits(td.d, benchTypedValid)
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
	b.Run("Decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v benchTyped
			td.Decode(benchTypedValid, &v, 101)
		}
	})
}

// handCheckTyped is the typed endpoint's rules written by hand (bench's
// CheckTypedOrder without the issue list): the floor of "decode, then
// check".
func handCheckTyped(o *benchTyped) bool {
	n := utf8.RuneCountInString(o.Customer)
	if n == 0 || n > 80 || (o.Email != "" && !isEmail(o.Email)) || len(o.Lines) < 1 || len(o.Lines) > 50 {
		return false
	}
	for _, l := range o.Lines {
		if l.Qty < 1 || l.Qty > 100 || utf8.RuneCountInString(l.SKU) < 3 {
			return false
		}
		for i := 0; i < len(l.SKU); i++ {
			c := l.SKU[i] | 0x20
			if !(c >= 'a' && c <= 'z') && !(l.SKU[i] >= '0' && l.SKU[i] <= '9') {
				return false
			}
		}
	}
	return true
}

// BenchmarkTypedDecoders is the decoders' table of docs/performance.md:
// the typed endpoint's valid body decoded into its type by go-json alone,
// by go-json and the rules checked by hand, by fx's former path (the
// strict pass and type scan, go-json, the rule plan) and by the one-pass
// decoder (strictness, decode and rules).
func BenchmarkTypedDecoders(b *testing.B) {
	td := must(compileType(reflect.TypeFor[benchTyped]()))
	b.Run("go-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v benchTyped
			if json.Unmarshal(benchTypedValid, &v) != nil {
				b.Fatal("refused")
			}
		}
	})
	b.Run("go-json+checks", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v benchTyped
			if json.Unmarshal(benchTypedValid, &v) != nil || !handCheckTyped(&v) {
				b.Fatal("refused")
			}
		}
	})
	b.Run("fx-before", func(b *testing.B) { // CheckJSON, the type scan, go-json, the rule plan
		b.ReportAllocs()
		for b.Loop() {
			var v benchTyped
			if CheckJSON(benchTypedValid) != nil || !fitsOnly(td.d, benchTypedValid) ||
				json.Unmarshal(benchTypedValid, &v) != nil || td.plan.run(reflect.ValueOf(&v).UnsafePointer(), nil, 101, nil) != nil {
				b.Fatal("refused")
			}
		}
	})
	b.Run("fx-after", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v benchTyped
			if issues, err := td.Decode(benchTypedValid, &v, 101); issues != nil || err != nil {
				b.Fatal("refused")
			}
		}
	})
}
