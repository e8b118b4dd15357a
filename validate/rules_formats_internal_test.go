package validate

import "testing"

// The byte-by-byte reading of an ASCII email domain decides as the rune
// reading does, over every string of up to five characters from the
// characters that matter (letters, digits, the allowed punctuation, a
// refused one, a multi-byte letter).
func TestEmailDomainASCIIAsRunes(t *testing.T) {
	alphabet := []string{"a", "Z", "0", ".", "-", "~", "_", "é"}
	var walk func(s string, n int)
	walk = func(s string, n int) {
		if got, want := emailDomain(s), emailDomainRunes(s); got != want {
			t.Fatalf("emailDomain(%q) = %v, emailDomainRunes %v", s, got, want)
		}
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			walk(s+c, n-1)
		}
	}
	walk("", 5)
}
