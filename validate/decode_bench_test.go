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

// benchDoc is a larger body: nested objects and arrays, escaped and
// non-ASCII strings, numbers with fractions and exponents.
var benchDoc = func() []byte {
	item := `{"sku":"A-1042","name":"Caf\u00e9 cr\u00e8me \"grande\"","note":"ünïcödé text, long enough to matter","price":12.5,"qty":3,"tags":["hot","drink","\ud83d\ude00"],"ratio":1.5e-3,"ok":true,"gift":null}`
	doc := `{"order":"o-1","items":[`
	for i := 0; i < 40; i++ {
		if i > 0 {
			doc += ","
		}
		doc += item
	}
	return []byte(doc + `],"total":1234.56}`)
}()

// BenchmarkJSONDoc: the strict reader over a 9 KiB body.
func BenchmarkJSONDoc(b *testing.B) {
	b.Run("DecodeJSON", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(benchDoc)))
		for b.Loop() {
			if _, err := validate.DecodeJSON(benchDoc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("CheckJSON", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(benchDoc)))
		for b.Loop() {
			if err := validate.CheckJSON(benchDoc); err != nil {
				b.Fatal(err)
			}
		}
	})
}
