package jsonscan

import (
	"encoding/json"
	"strconv"
	"testing"
	"unicode/utf8"
)

// TestStringFaults: where a malformed string is caught and why; the body
// reader and the WASM parser word their errors from these.
func TestStringFaults(t *testing.T) {
	cases := []struct {
		in       string
		strict   bool
		end      int
		verbatim bool
		f        Fault
	}{
		{`"abc"x`, true, 5, true, None},
		{`"a\nb"`, true, 6, false, None},
		{"\"\xc3\xa9\"", true, 4, true, None},
		{"\"a\xffb\"", false, 5, false, None},
		{"\"a\xffb\"", true, 2, false, BadUTF8},
		{"\"a\x01\"", true, 2, false, Control},
		{`"a\x"`, true, 3, false, BadEscape},
		{`"\u12G4"`, true, 5, false, BadHex},
		{`"\u12`, true, 5, false, End},
		{`"ab\`, true, 4, false, End},
		{`"abc`, true, 4, false, End},
	}
	for _, tc := range cases {
		end, verbatim, f := String([]byte(tc.in), 0, tc.strict)
		if end != tc.end || verbatim != tc.verbatim || f != tc.f {
			t.Errorf("String(%q, strict %v) = %d %v %d, want %d %v %d", tc.in, tc.strict, end, verbatim, f, tc.end, tc.verbatim, tc.f)
		}
	}
}

// TestStringEveryBytePosition: one byte of every value at every position
// of strings around the eight-byte word String reads at a time, followed
// by more text: the string ends, or faults, exactly where that byte says.
func TestStringEveryBytePosition(t *testing.T) {
	for n := 1; n <= 19; n++ {
		for pos := range n {
			for b := range 256 {
				content := make([]byte, n)
				for k := range content {
					content[k] = 'a'
				}
				content[pos] = byte(b)
				d := append(append(append([]byte{'"'}, content...), '"'), "0123456789abcdef"...)
				wantEnd, wantVerbatim, wantF := n+2, true, None
				switch c := byte(b); {
				case c == '"':
					wantEnd = pos + 2
				case c == '\\':
					if pos == n-1 {
						continue // an escape of the closing quote: TestStringFaults' cases
					}
					wantEnd, wantVerbatim, wantF = pos+2, false, BadEscape // "\\a"
				case c < 0x20:
					wantEnd, wantVerbatim, wantF = pos+1, false, Control
				case c >= 0x80:
					wantEnd, wantVerbatim, wantF = pos+1, false, BadUTF8 // alone: never valid UTF-8
				}
				end, verbatim, f := String(d, 0, true)
				if end != wantEnd || verbatim != wantVerbatim || f != wantF {
					t.Fatalf("n=%d pos=%d byte=%#x: String = %d %v %d, want %d %v %d", n, pos, b, end, verbatim, f, wantEnd, wantVerbatim, wantF)
				}
			}
		}
	}
}

// TestNumberFaults: the grammar of RFC 8259 numbers, the offset where a
// digit was wanted, and the exponent flag.
func TestNumberFaults(t *testing.T) {
	cases := []struct {
		in  string
		end int
		exp bool
		f   Fault
	}{
		{`0`, 1, false, None},
		{`-12.5,`, 5, false, None},
		{`01`, 1, false, None},
		{`1e+9]`, 4, true, None},
		{`-`, 1, false, NoDigit},
		{`-x`, 1, false, NoDigit},
		{`1.`, 2, false, NoFraction},
		{`1.e5`, 2, false, NoFraction},
		{`2E`, 2, true, NoExponent},
		{`2e-x`, 3, true, NoExponent},
	}
	for _, tc := range cases {
		end, exp, f := Number([]byte(tc.in), 0)
		if end != tc.end || exp != tc.exp || f != tc.f {
			t.Errorf("Number(%q) = %d %v %d, want %d %v %d", tc.in, end, exp, f, tc.end, tc.exp, tc.f)
		}
	}
}

func TestLiteral(t *testing.T) {
	for _, tc := range []struct {
		in, word string
		end      int
		f        Fault
	}{
		{"true,", "true", 4, None},
		{"trux", "true", 0, BadWord},
		{" nul", "null", 4, End},
	} {
		i := Space([]byte(tc.in), 0)
		if end, f := Literal([]byte(tc.in), i, tc.word); end != tc.end || f != tc.f {
			t.Errorf("Literal(%q, %q) = %d %d, want %d %d", tc.in, tc.word, end, f, tc.end, tc.f)
		}
	}
}

// TestUnescape: escapes, surrogate pairs, and U+FFFD for each invalid
// byte and each unpaired surrogate, as encoding/json decodes them.
func TestUnescape(t *testing.T) {
	for _, in := range []string{
		`plain`, `a\"b\\c\/d\b\f\n\r\t`, `\u00e9t\u00E9`, `\ud83d\ude00`,
		`\ud800`, `\ud800x`, `\udc00\ud800`, `\ud800\u0041`, `\ud83d\ud83d\ude00`,
		"caf\xc3\xa9 \xff\xfe", "\xe2\x82\\u00ac",
	} {
		var want string
		if err := json.Unmarshal([]byte(`"`+in+`"`), &want); err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if got := string(Unescape(nil, []byte(in))); got != want {
			t.Errorf("Unescape(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzTokens holds the token functions to encoding/json: a string or a
// number they accept is one encoding/json accepts, with the same value; a
// token they refuse makes the whole input invalid; a strict string is a
// lax one with valid UTF-8; the cursor skips exactly one valid document.
func FuzzTokens(f *testing.F) {
	for _, s := range []string{
		`"abc"`, `"a\u00e9\ud83d\ude00\n"`, "\"\xff\"", `"\ud800"`, `"\u12`, `-0.5e+10`,
		`01`, `1.`, `{"a":[1,"}",{"b":null}],"c":true}`, `[ 1 , "x\"y" ]`, ` "x" `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		switch c := data[0]; {
		case c == '"':
			end, verbatim, fault := String(data, 0, false)
			sEnd, sVerbatim, sFault := String(data, 0, true)
			var want string
			err := json.Unmarshal(data[:end], &want)
			if fault != None {
				if json.Valid(data) {
					t.Fatalf("%q: fault %d at %d, encoding/json accepts it", data, fault, end)
				}
				return
			}
			if err != nil {
				t.Fatalf("%q: accepted %q, encoding/json: %v", data, data[:end], err)
			}
			if got := string(Unescape(nil, data[1:end-1])); got != want {
				t.Fatalf("%q: Unescape %q, encoding/json %q", data, got, want)
			}
			if verbatim && string(data[1:end-1]) != want {
				t.Fatalf("%q: verbatim but its value is %q", data, want)
			}
			valid := utf8.Valid(data[:end])
			if valid != (sFault == None) || (valid && (sEnd != end || sVerbatim != verbatim)) {
				t.Fatalf("%q: strict %d %v %d, lax %d %v", data, sEnd, sVerbatim, sFault, end, verbatim)
			}
		case c == '-' || c >= '0' && c <= '9':
			end, _, fault := Number(data, 0)
			if fault != None {
				if json.Valid(data) {
					t.Fatalf("%q: fault %d at %d, encoding/json accepts it", data, fault, end)
				}
				return
			}
			if !json.Valid(data[:end]) {
				t.Fatalf("%q: accepted %q, encoding/json refuses it", data, data[:end])
			}
			if _, err := strconv.ParseFloat(string(data[:end]), 64); err != nil && err.(*strconv.NumError).Err != strconv.ErrRange {
				t.Fatalf("%q: accepted %q: %v", data, data[:end], err)
			}
		}
		if json.Valid(data) {
			c := Cursor{Data: data}
			c.SkipValue()
			if Space(data, c.Pos) != len(data) {
				t.Fatalf("%q: SkipValue stopped at %d", data, c.Pos)
			}
		}
	})
}

// TestIsNull: null with JSON white space around it is null; a Unicode or
// form-feed space, a longer word or anything after it is not (the grammar
// check reports those).
func TestIsNull(t *testing.T) {
	for in, want := range map[string]bool{
		"null": true, " null": true, "\t\r\nnull \n": true,
		"": false, "nul": false, "nulls": false, "null x": false, "\fnull": false,
		"null\f": false, "\u00a0null": false, "{}": false, `"null"`: false, "nullnull": false,
	} {
		if got := IsNull([]byte(in)); got != want {
			t.Errorf("IsNull(%q) = %v, want %v", in, got, want)
		}
	}
}
