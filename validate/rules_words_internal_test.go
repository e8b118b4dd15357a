package validate

import (
	"testing"
	"unicode/utf8"
	"unsafe"
)

// The direct checks of min, gte, max and lte on a string's or a slice's
// length decide as the generic comparison of its rune or element count.
func TestLengthBoundAsGeneric(t *testing.T) {
	strs := []string{"", "a", "é", "ab", "éé", "aé", "abc", "ééé", "a\xffb", "😀😀"}
	for _, name := range []string{"min", "gte", "max", "lte"} {
		o := ops[name]
		for n := int64(0); n <= 9; n++ {
			str, slice := lengthBound(tString, name, n), lengthBound(tSlice, name, n)
			for _, s := range strs {
				if got, want := str(unsafe.Pointer(&s)), o.pass(cmp3(int64(utf8.RuneCountInString(s)), n)); got != want {
					t.Errorf("%s=%d on %q: %v, want %v", name, n, s, got, want)
				}
				b := []byte(s)
				if got, want := slice(unsafe.Pointer(&b)), o.pass(cmp3(int64(len(b)), n)); got != want {
					t.Errorf("%s=%d on %d elements: %v, want %v", name, n, len(b), got, want)
				}
			}
		}
	}
}
