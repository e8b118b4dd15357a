package jsonscan_test

import (
	"reflect"
	"testing"

	"github.com/fxhq/fx/internal/jsonscan"
	"github.com/fxhq/fx/validate"
)

// TestCursorSkipValue: SkipValue skips exactly one value (leading
// space included) and stops before what follows it; the inputs are the
// cases a naive scanner gets wrong (brackets and quotes inside strings,
// escaped quotes and backslashes, nesting, literals ended by ',' ']' '}').
func TestCursorSkipValue(t *testing.T) {
	for _, tc := range []struct{ in, value string }{
		{`"abc",1`, `"abc"`},
		{`"a\"b\\",1`, `"a\"b\\"`},
		{`"\\"]`, `"\\"`},
		{`"\u00e9}]"}`, `"\u00e9}]"`},
		{`  {"a":[1,{"b":"]}"}],"c":{}} ,2`, `{"a":[1,{"b":"]}"}],"c":{}}`},
		{`[[],[[]],"[\"",{}]]`, `[[],[[]],"[\"",{}]`},
		{`-12.5e+3,`, `-12.5e+3`},
		{`0]`, `0`},
		{`true}`, `true`},
		{"false\n", `false`},
		{`null`, `null`},
	} {
		c := jsonscan.Cursor{Data: []byte(tc.in)}
		c.SkipValue()
		lead := 0
		for lead < len(tc.in) && tc.in[lead] == ' ' {
			lead++
		}
		if got := tc.in[lead:c.Pos]; got != tc.value {
			t.Errorf("SkipValue(%q) skipped %q, want %q", tc.in, got, tc.value)
		}
		if err := validate.CheckJSON([]byte(tc.value)); err != nil {
			t.Errorf("table value %q is not well formed: %v", tc.value, err)
		}
	}
}

// TestCursorSkipString: the raw text keeps both quotes and the
// escapes as written; esc reports an escape.
func TestCursorSkipString(t *testing.T) {
	for _, tc := range []struct {
		in, raw string
		esc     bool
	}{
		{`"plain":1`, `"plain"`, false},
		{`""`, `""`, false},
		{`"a\nb"`, `"a\nb"`, true},
		{`"q\"uote" `, `"q\"uote"`, true},
		{`"\\"x"`, `"\\"`, true},
	} {
		c := jsonscan.Cursor{Data: []byte(tc.in)}
		raw, esc := c.SkipString()
		if string(raw) != tc.raw || esc != tc.esc || c.Pos != len(tc.raw) {
			t.Errorf("SkipString(%q) = %q, %v, Pos %d; want %q, %v, Pos %d", tc.in, raw, esc, c.Pos, tc.raw, tc.esc, len(tc.raw))
		}
	}
}

// TestCursorMembers: Members visits every key in order with Pos at
// its value, ends after the closing brace, and stops at once when fn
// returns false (Pos where fn left it).
func TestCursorMembers(t *testing.T) {
	in := ` { "a" : [1, {"x":"}"}] , "b\"c":"v", "d":{} } ,`
	c := jsonscan.Cursor{Data: []byte(in)}
	c.SkipSpace()
	var keys, values []string
	var escs []bool
	c.Members(func(raw []byte, esc bool) bool {
		keys, escs = append(keys, string(raw)), append(escs, esc)
		start := c.Pos
		c.SkipValue()
		values = append(values, string(c.Data[start:c.Pos]))
		return true
	})
	if want := []string{`"a"`, `"b\"c"`, `"d"`}; !reflect.DeepEqual(keys, want) {
		t.Errorf("keys %q, want %q", keys, want)
	}
	if want := []bool{false, true, false}; !reflect.DeepEqual(escs, want) {
		t.Errorf("escape flags %v, want %v", escs, want)
	}
	if want := []string{`[1, {"x":"}"}]`, `"v"`, `{}`}; !reflect.DeepEqual(values, want) {
		t.Errorf("values %q, want %q", values, want)
	}
	if rest := in[c.Pos:]; rest != " ," {
		t.Errorf("after Members the rest is %q, want %q", rest, " ,")
	}

	c = jsonscan.Cursor{Data: []byte(in), Pos: 1}
	n := 0
	c.Members(func(raw []byte, esc bool) bool {
		n++
		return false // stop before skipping the value
	})
	if n != 1 || in[c.Pos] != '[' {
		t.Errorf("early stop: %d calls, Pos at %q; want 1 call, Pos at the first value", n, in[c.Pos])
	}

	c = jsonscan.Cursor{Data: []byte(`{ }x`)}
	c.Members(func([]byte, bool) bool { t.Error("fn called for an empty object"); return true })
	if c.Pos != 3 {
		t.Errorf("empty object: Pos %d, want 3", c.Pos)
	}
}

// TestCursorElements: Elements visits every element with Pos at
// it, ends after the closing bracket, and stops at once when fn returns
// false.
func TestCursorElements(t *testing.T) {
	in := `[ 1 , "a,]" ,[2,[3]], {"k":[]}, true ,null]!`
	var got []string
	c := jsonscan.Cursor{Data: []byte(in)}
	c.Elements(func() bool {
		start := c.Pos
		c.SkipValue()
		got = append(got, string(c.Data[start:c.Pos]))
		return true
	})
	if want := []string{`1`, `"a,]"`, `[2,[3]]`, `{"k":[]}`, `true`, `null`}; !reflect.DeepEqual(got, want) {
		t.Errorf("elements %q, want %q", got, want)
	}
	if rest := in[c.Pos:]; rest != "!" {
		t.Errorf("after Elements the rest is %q, want %q", rest, "!")
	}

	c = jsonscan.Cursor{Data: []byte(in)}
	n := 0
	c.Elements(func() bool {
		n++
		c.SkipValue()
		return n < 2
	})
	if n != 2 || in[c.Pos:c.Pos+2] != " ," {
		t.Errorf("early stop: %d calls, rest %q; want 2 calls, Pos after the second element", n, in[c.Pos:])
	}

	c = jsonscan.Cursor{Data: []byte(`[]x`)}
	c.Elements(func() bool { t.Error("fn called for an empty array"); return true })
	if c.Pos != 2 {
		t.Errorf("empty array: Pos %d, want 2", c.Pos)
	}
}

// TestCursorNoAlloc: the cost the doc comment states.
func TestCursorNoAlloc(t *testing.T) {
	data := []byte(`{"a":[1,"x\"y",{"b":null}],"c":true}`)
	allocs := testing.AllocsPerRun(100, func() {
		c := jsonscan.Cursor{Data: data}
		c.Members(func([]byte, bool) bool {
			c.SkipValue()
			return true
		})
	})
	if allocs != 0 {
		t.Errorf("a walk allocates %.0f times, want 0", allocs)
	}
}
