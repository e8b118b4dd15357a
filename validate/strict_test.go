package validate_test

import (
	stdjson "encoding/json"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/fxhq/fx/internal/tagengine"
	"github.com/fxhq/fx/validate"
)

func TestDecodeJSONMatchesEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`{"a":1,"b":[true,false,null,"x"],"c":{"d":-2.5e3}}`,
		`  [1, 2 ,3]  `,
		`"\u00e9\n\"\\\/ \ud83d\ude00"`,
		`"\ud800 lone"`,
		`0`, `-0.0`, `1E+2`, `null`, `{}`, `[]`,
		`{"a\u0062":1,"ab\u0063":2}`,
	} {
		got, err := validate.DecodeJSON([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		var want any
		if err := stdjson.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %#v, want %#v", in, got, want)
		}
		if err := validate.CheckJSON([]byte(in)); err != nil {
			t.Errorf("CheckJSON(%s) = %v", in, err)
		}
	}
}

func TestJSONRejects(t *testing.T) {
	for _, tc := range []struct {
		in, msg string
		path    []string
	}{
		{``, "Not valid JSON: the input is empty", nil},
		{`   `, "Not valid JSON: the input is empty", nil},
		{`{"a":1} x`, "unexpected data after the JSON value at byte 8", nil},
		{`{"a":1}{}`, "unexpected data after the JSON value", nil},
		{`[1,]`, "unexpected character ']'", nil},
		{`{"a":1,}`, "expected a key in double quotes", nil},
		{`{'a':1}`, "unexpected character '''", nil},
		{`{"a" 1}`, "expected ':'", nil},
		{`[1 2]`, "expected ',' or ']'", nil},
		{`{"a":1`, "unexpected end of input", nil},
		{`"abc`, "unexpected end of input", nil},
		{`tru`, "unexpected end of input", nil},
		{`NaN`, "unexpected character 'N'", nil},
		{`01`, "unexpected data after the JSON value", nil},
		{`1.`, "unexpected end of input", nil},
		{`-`, "unexpected end of input", nil},
		{`0x10`, "unexpected data after the JSON value at byte 1", nil},
		{`nul!`, "unexpected word at byte 0", nil},
		{"\"a\x01\"", "control character in a string", nil},
		{"\"\xff\"", "invalid UTF-8 at byte 1", nil},
		{`"\x"`, "invalid escape sequence", nil},
		{`"\u12g4"`, "four hex digits", nil},
		{`{"a":1,"a":2}`, `Duplicate key "a"`, []string{"a"}},
		{`{"a":1,"\u0061":2}`, `Duplicate key "a"`, []string{"a"}},
		{`{"items":[{"sku":1},{"sku":1,"qty":2,"sku":3}]}`, `Duplicate key "sku"`, []string{"items", "1", "sku"}},
		{strings.Repeat("[", validate.MaxDepth+1), "nested more than 512 levels deep", nil},
		{`{"a":[0,-1e400]}`, "Number is too large", []string{"a", "1"}},
		{`{"a":1e400,"b":}`, "Number is too large", []string{"a"}},
		{"1" + strings.Repeat("0", 309), "Number is too large", nil},
	} {
		for _, mode := range []string{"check", "decode"} {
			var err error
			if mode == "check" {
				err = validate.CheckJSON([]byte(tc.in))
			} else {
				_, err = validate.DecodeJSON([]byte(tc.in))
			}
			je, ok := err.(*validate.JSONError)
			if !ok {
				t.Fatalf("%s %q: got %v, want a *JSONError", mode, tc.in, err)
			}
			if !strings.Contains(je.Message, tc.msg) {
				t.Errorf("%s %q: message %q, want it to contain %q", mode, tc.in, je.Message, tc.msg)
			}
			if len(je.Path) != len(tc.path) || (len(tc.path) > 0 && !reflect.DeepEqual(je.Path, tc.path)) {
				t.Errorf("%s %q: path %q, want %q", mode, tc.in, je.Path, tc.path)
			}
		}
	}
}

func TestDuplicateKeysInLargeObject(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 200 {
		b.WriteString(`"k` + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `":0,`)
	}
	ok := b.String() + `"last":0}`
	if err := validate.CheckJSON([]byte(ok)); err != nil {
		t.Fatalf("unique keys rejected: %v", err)
	}
	dup := b.String() + `"kaa":1}`
	for _, f := range []func([]byte) error{validate.CheckJSON, func(d []byte) error { _, err := validate.DecodeJSON(d); return err }} {
		err := f([]byte(dup))
		if je, ok := err.(*validate.JSONError); !ok || !reflect.DeepEqual(je.Path, []string{"kaa"}) {
			t.Errorf("got %v, want the duplicate kaa", err)
		}
	}
	// the same key in sibling objects is not a duplicate
	if err := validate.CheckJSON([]byte(`[{"a":1},{"a":2,"b":{"a":3}}]`)); err != nil {
		t.Error(err)
	}
}

func TestCheckJSONAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not deterministic under -race")
	}
	body := []byte(`{"item":"book","quantity":2,"email":"ada@example.com","tags":["a","b"],"n":{"x":1.5e3}}`)
	validate.CheckJSON(body) // warm the pool
	if n := testing.AllocsPerRun(100, func() { validate.CheckJSON(body) }); n != 0 {
		t.Errorf("CheckJSON allocates %v times per call on a valid body, want 0", n)
	}
}

func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}]}`, `"\ud83d\ude00"`, `{"a":1,"a":2}`, `[1,]`, `1e999`, "\"\xff\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := validate.DecodeJSON(data)
		cerr := validate.CheckJSON(data)
		stdOK := stdjson.Valid(data)
		if !reflect.DeepEqual(err, cerr) {
			t.Fatalf("%q: DecodeJSON says %#v, CheckJSON says %#v", data, err, cerr)
		}
		if err == nil {
			if cerr != nil {
				t.Fatalf("DecodeJSON accepts, CheckJSON rejects: %v", cerr)
			}
			if !stdOK {
				t.Fatalf("accepted invalid JSON %q", data)
			}
			var want any
			stdjson.Unmarshal(data, &want)
			if !reflect.DeepEqual(v, want) {
				t.Fatalf("%q: got %#v, want %#v", data, v, want)
			}
		} else if _, ok := err.(*validate.JSONError); !ok {
			t.Fatalf("error of type %T", err)
		}
		if cerr == nil && !stdOK {
			t.Fatalf("CheckJSON accepted invalid JSON %q", data)
		}
	})
}

// TestTypedBodyDecodeAllocations: the one pass allocates one buffer for
// every string of a small body and one backing array per slice; the
// strict checks and the rules allocate nothing.
func TestTypedBodyDecodeAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not deterministic under -race")
	}
	type line struct {
		SKU string `json:"sku" validate:"required"`
		Qty int    `json:"qty"`
	}
	type order struct {
		Customer string `json:"customer" validate:"max=80"`
		Lines    []line `json:"lines" validate:"min=1,dive"`
	}
	td, _ := tagengine.For[validate.Issue]().Body(reflect.TypeFor[order]())
	body := []byte(`{"customer":"Ada","lines":[{"sku":"A100","qty":2},{"sku":"B\u0032","qty":1}],"note":{"x":[1.5e3]}}`)
	v := new(order)
	decode := func() {
		*v = order{}
		if issues, err := td.DecodeAt(body, unsafe.Pointer(v), nil, 0); issues != nil || err != nil {
			t.Fatal(issues, err)
		}
	}
	decode() // warm the pools
	if n := testing.AllocsPerRun(100, decode); n != 2 {
		t.Errorf("the typed body's Decode allocates %v times on a valid body, want 2 (the strings, the lines)", n)
	}
	if v.Lines[1].SKU != "B2" || v.Customer != "Ada" || len(v.Lines) != 2 {
		t.Errorf("decoded %+v", *v)
	}
}
