package wasm

import (
	"strings"
	"testing"
)

func TestTailWriter(t *testing.T) {
	w := tailWriter{max: 16}
	w.Write([]byte("abc"))
	if w.String() != "abc" {
		t.Fatalf("%q", w.String())
	}
	w.Write([]byte("defghijklmnop"))
	w.Write([]byte("qrstuvwxyz"))
	got := w.String()
	if !strings.HasPrefix(got, "abcd\n[... ") || !strings.HasSuffix(got, "opqrstuvwxyz") || !strings.Contains(got, "10 bytes elided") {
		t.Fatalf("%q", got)
	}
	w.Write([]byte(strings.Repeat("x", 100) + "END"))
	if got := w.String(); !strings.HasSuffix(got, "xxxEND") || !strings.HasPrefix(got, "abcd") || len(got) > 16+40 {
		t.Fatalf("%q", got)
	}
	w.Reset()
	if w.String() != "" {
		t.Fatal("reset")
	}
	none := tailWriter{}
	if n, _ := none.Write([]byte("x")); n != 1 || none.String() != "" {
		t.Fatal("max 0")
	}
}
