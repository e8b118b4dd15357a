package wasm

import (
	"strings"
	"testing"
)

// benchResponses are WasmResponse documents of the usual shapes: a small
// JSON answer with headers, a text body with escapes and non-ASCII text,
// and a 4 KiB body.
var benchResponses = []struct{ name, doc string }{
	{"small", `{"status":200,"headers":{"Content-Type":"application/json","Set-Cookie":["a=1","b=2"]},"body":"{\"ok\":true}"}`},
	{"escapes", `{"status":404,"headers":{"X-Reason":"not found"},"body":"line one\nline \"two\"\t\u00e9t\u00e9 \ud83d\ude00 ünïcödé"}`},
	{"4KiB", `{"status":200,"headers":{"Content-Type":"text/plain"},"body":"` + strings.Repeat("the quick brown fox ", 205) + `"}`},
}

// BenchmarkParseResponse measures the WasmResponse parser alone (no guest,
// no HTTP): go test ./wasm -run '^$' -bench ParseResponse -benchmem
func BenchmarkParseResponse(b *testing.B) {
	for _, tc := range benchResponses {
		b.Run(tc.name, func(b *testing.B) {
			data := []byte(tc.doc)
			var r response
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if err := parseResponse(data, &r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
