package validate_test

import (
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/fxhq/fx/internal/tagengine"
	"github.com/fxhq/fx/validate"
)

// tagIssues validates body with Struct[T] over the bytes and over the tree,
// requires both paths to agree, and returns "path: message" lines.
func tagIssues[T any](t *testing.T, body string, max int) []string {
	t.Helper()
	s := validate.Struct[T]()
	byBytes := s.ValidateJSONLimit([]byte(body), max)
	tree, err := validate.DecodeJSON([]byte(body))
	if err != nil {
		t.Fatalf("bad test body %s: %v", body, err)
	}
	byTree := s.ValidateLimit(tree, max)
	a, b := lines(byBytes), lines(byTree)
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Fatalf("%s: bytes and tree disagree:\n%v\n%v", body, a, b)
	}
	if len(a) == 0 && byBytes.Value == nil {
		t.Fatalf("%s: no issue and no value", body)
	}
	return a
}

func lines(r validate.Result) []string {
	var out []string
	for _, is := range r.Issues {
		out = append(out, strings.Join(is.Path, ".")+": "+is.Message)
	}
	return out
}

type wordCase struct {
	body string
	want string // "" accepted; else the one issue "path: message"
}

// runWords runs each case's body over base (its keys override base's).
func runWords[T any](t *testing.T, base string, cases []wordCase) {
	t.Helper()
	for _, c := range cases {
		var m, extra map[string]any
		if err := json.Unmarshal([]byte(base), &m); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(c.body), &extra); err != nil {
			t.Fatal(err)
		}
		maps.Copy(m, extra)
		b, _ := json.Marshal(m)
		c.body = string(b)
		got := strings.Join(tagIssues[T](t, c.body, 0), "; ")
		if got != c.want {
			t.Errorf("%T %s: got %q, want %q", *new(T), c.body, got, c.want)
		}
	}
}

// TestTagWordsStrings: each word on strings, with its message.
func TestTagWordsStrings(t *testing.T) {
	type S struct {
		Req   string   `json:"req" validate:"required"`
		Min   string   `json:"min,omitempty" validate:"omitempty,min=3"`
		Max   string   `json:"max" validate:"max=3"`
		Len   string   `json:"len" validate:"omitempty,len=2"`
		Eq    string   `json:"eq" validate:"omitempty,eq=yes"`
		Ne    string   `json:"ne" validate:"ne=no"`
		Gt    string   `json:"gt" validate:"omitempty,gt=1"`
		Lt    string   `json:"lt" validate:"lt=3"`
		One   string   `json:"one" validate:"omitempty,oneof=red 'dark blue'"`
		Email string   `json:"email" validate:"omitempty,email"`
		URL   string   `json:"url" validate:"omitempty,url"`
		URI   string   `json:"uri" validate:"omitempty,uri"`
		UUID  string   `json:"uuid" validate:"omitempty,uuid"`
		Date  string   `json:"date" validate:"omitempty,datetime=2006-01-02"`
		Alpha string   `json:"alpha" validate:"omitempty,alpha"`
		AlNum string   `json:"alnum" validate:"omitempty,alphanum"`
		Num   string   `json:"num" validate:"omitempty,numeric"`
		Hex   string   `json:"hex" validate:"omitempty,hexadecimal"`
		Low   string   `json:"low" validate:"omitempty,lowercase"`
		Up    string   `json:"up" validate:"omitempty,uppercase"`
		IP    string   `json:"ip" validate:"omitempty,ip"`
		IP4   string   `json:"ip4" validate:"omitempty,ipv4"`
		IP6   string   `json:"ip6" validate:"omitempty,ipv6"`
		CIDR  string   `json:"cidr" validate:"omitempty,cidr"`
		Host  string   `json:"host" validate:"omitempty,hostname"`
		SW    string   `json:"sw" validate:"omitempty,startswith=ab"`
		EW    string   `json:"ew" validate:"omitempty,endswith=yz"`
		Has   string   `json:"has" validate:"omitempty,contains=0x2C"`
		Not   string   `json:"not" validate:"excludes=@"`
		Pat   string   `json:"pat" pattern:"^[A-Z0-9-]+$"`
		Ptr   *string  `json:"ptr" validate:"omitempty,min=2"`
		PReq  *string  `json:"preq" validate:"required"`
		Tags  []string `json:"tags" validate:"omitempty,dive,alpha"`
	}
	ok := `"req":"x","preq":"","pat":"A-1"`
	runWords[S](t, "{"+ok+"}", []wordCase{
		{`{` + ok + `}`, ""},
		{`{"req":""}`, "req: Required"},
		{`{"preq":null}`, "preq: Required"},
		{`{` + ok + `,"min":"ab"}`, "min: Must be at least 3 characters long"},
		{`{` + ok + `,"min":"äöü"}`, ""}, // runes, not bytes
		{`{` + ok + `,"max":"abcd"}`, "max: Must be at most 3 characters long"},
		{`{` + ok + `,"len":"abc"}`, "len: Must be exactly 2 characters long"},
		{`{` + ok + `,"eq":"no"}`, `eq: Must equal "yes"`},
		{`{` + ok + `,"ne":"no"}`, `ne: Must not equal "no"`},
		{`{` + ok + `,"gt":"a"}`, "gt: Must be more than 1 character long"},
		{`{` + ok + `,"lt":"abc"}`, "lt: Must be fewer than 3 characters long"},
		{`{` + ok + `,"one":"dark blue"}`, ""},
		{`{` + ok + `,"one":"blue"}`, `one: Must be one of: "red", "dark blue"`},
		{`{` + ok + `,"email":"a@b.example"}`, ""},
		{`{` + ok + `,"email":"a@b"}`, "email: Must be a valid email address"},
		{`{` + ok + `,"url":"https://x.example/a"}`, ""},
		{`{` + ok + `,"url":"x.example"}`, "url: Must be a valid URL"},
		{`{` + ok + `,"uri":"/a/b"}`, ""},
		{`{` + ok + `,"uri":"a b"}`, "uri: Must be a valid URI"},
		{`{` + ok + `,"uuid":"123e4567-e89b-12d3-a456-426614174000"}`, ""},
		{`{` + ok + `,"uuid":"123e4567e89b12d3a456426614174000"}`, "uuid: Must be a valid UUID"},
		{`{` + ok + `,"date":"2024-02-29"}`, ""},
		{`{` + ok + `,"date":"2023-02-29"}`, "date: Must be a date-time in the layout 2006-01-02"},
		{`{` + ok + `,"alpha":"abC1"}`, "alpha: Must contain only ASCII letters"},
		{`{` + ok + `,"alnum":"ab-1"}`, "alnum: Must contain only ASCII letters and digits"},
		{`{` + ok + `,"num":"-1.5"}`, ""},
		{`{` + ok + `,"num":"1e3"}`, "num: Must be a numeric string"},
		{`{` + ok + `,"hex":"0xBEEF"}`, ""},
		{`{` + ok + `,"hex":"0x"}`, "hex: Must be a hexadecimal string"},
		{`{` + ok + `,"low":"abc1"}`, ""},
		{`{` + ok + `,"low":"aBc"}`, "low: Must be a non-empty lowercase string"},
		{`{` + ok + `,"up":"ÄB"}`, ""},
		{`{` + ok + `,"up":"Äb"}`, "up: Must be a non-empty uppercase string"},
		{`{` + ok + `,"ip":"::1"}`, ""},
		{`{` + ok + `,"ip":"1.2.3"}`, "ip: Must be a valid IP address"},
		{`{` + ok + `,"ip4":"::1"}`, "ip4: Must be a valid IPv4 address"},
		{`{` + ok + `,"ip6":"10.0.0.1"}`, "ip6: Must be a valid IPv6 address"},
		{`{` + ok + `,"cidr":"10.0.0.0/8"}`, ""},
		{`{` + ok + `,"cidr":"10.0.0.0/33"}`, "cidr: Must be a valid CIDR address (address/prefix length)"},
		{`{` + ok + `,"host":"api.example.com"}`, ""},
		{`{` + ok + `,"host":"-api.example"}`, "host: Must be a valid hostname"},
		{`{` + ok + `,"sw":"xab"}`, `sw: Must start with "ab"`},
		{`{` + ok + `,"ew":"yzx"}`, `ew: Must end with "yz"`},
		{`{` + ok + `,"has":"a,b"}`, ""},
		{`{` + ok + `,"has":"ab"}`, `has: Must contain ","`},
		{`{` + ok + `,"not":"a@b"}`, `not: Must not contain "@"`},
		{`{"pat":"a"}`, "pat: Must match the pattern ^[A-Z0-9-]+$"},
		{`{` + ok + `,"ptr":"a"}`, "ptr: Must be at least 2 characters long"},
		{`{` + ok + `,"ptr":null}`, ""},
		{`{` + ok + `,"tags":["ab","c1"]}`, "tags.1: Must contain only ASCII letters"},
	})
}

// TestTagWordsNumbersAndCollections: the same words compare values on
// numbers and count elements on slices and maps.
func TestTagWordsNumbersAndCollections(t *testing.T) {
	type Item struct {
		SKU string `json:"sku" validate:"required"`
	}
	type N struct {
		Qty   int               `json:"qty" validate:"required,min=1,max=100"`
		Small int8              `json:"small" validate:"gte=-3,lte=3"`
		U     uint16            `json:"u" validate:"ne=7"`
		F     float64           `json:"f" validate:"gt=0.5,lt=2"`
		Level int               `json:"level" validate:"omitempty,oneof=1 2 3"`
		On    bool              `json:"on" validate:"eq=true"`
		Wait  time.Duration     `json:"wait" validate:"max=1s"`
		Items []Item            `json:"items" validate:"required,min=1,max=2"`
		IDs   []int             `json:"ids" validate:"unique,dive,gt=0"`
		Attrs map[string]string `json:"attrs" validate:"max=2,dive,keys,alpha,endkeys,required"`
	}
	ok := `"qty":5,"f":1,"on":true,"items":[{"sku":"a"}]`
	runWords[N](t, "{"+ok+"}", []wordCase{
		{`{` + ok + `}`, ""},
		{`{"qty":null}`, "qty: Expected an integer, got null"}, // not the zero value: refused as the schema refuses it
		{`{` + ok + `,"qty":0}`, "qty: Required"},
		{`{` + ok + `,"qty":101}`, "qty: Must be at most 100"},
		{`{` + ok + `,"small":-4}`, "small: Must be at least -3"},
		{`{` + ok + `,"u":7}`, "u: Must not equal 7"},
		{`{` + ok + `,"f":0.5}`, "f: Must be greater than 0.5"},
		{`{` + ok + `,"f":2}`, "f: Must be less than 2"},
		{`{` + ok + `,"level":4}`, "level: Must be one of: 1, 2, 3"},
		{`{` + ok + `,"on":false}`, "on: Must equal true"},
		{`{` + ok + `,"wait":1000000001}`, "wait: Must be at most 1000000000"},
		{`{` + ok + `,"items":[]}`, "items: Must have at least 1 item"},
		{`{` + ok + `,"items":null}`, "items: Expected an array, got null"},
		{`{` + ok + `,"items":[{"sku":"a"},{"sku":"b"},{"sku":"c"}]}`, "items: Must have at most 2 items"},
		{`{` + ok + `,"items":[{"sku":"a"},{}]}`, "items.1.sku: Required"},
		{`{` + ok + `,"ids":[1,2,1]}`, "ids: Must not contain duplicates"},
		{`{` + ok + `,"ids":[1,0]}`, "ids.1: Must be greater than 0"},
		{`{` + ok + `,"attrs":{"a":"x","b":"y","c":"z"}}`, "attrs: Must have at most 2 entries"},
		{`{` + ok + `,"attrs":{"a1":"x"}}`, "attrs.a1: Must contain only ASCII letters"},
		{`{` + ok + `,"attrs":{"a":""}}`, "attrs.a: Required"},
	})
}

// TestTagStartupErrors: a tag that cannot be honoured is an error naming
// type, field and word, from CompileStruct, and a panic from Struct.
func TestTagStartupErrors(t *testing.T) {
	type Unknown struct {
		Name string `json:"name" validate:"required,iscolor"`
	}
	type Misfit struct {
		Qty int `json:"qty" validate:"email"`
	}
	type BadParam struct {
		Qty int `json:"qty" validate:"min=abc"`
	}
	type BadRegexp struct {
		Code string `json:"code" pattern:"^[A-Z+$"`
	}
	type DiveScalar struct {
		Name string `json:"name" validate:"dive,required"`
	}
	type Alternatives struct {
		Color string `json:"color" validate:"hexcolor|rgb"`
	}
	cases := []struct {
		err        func() error
		typ, field string
		word       string
	}{
		{func() error { _, err := validate.CompileStruct[Unknown](); return err }, "Unknown", "Name", "iscolor"},
		{func() error { _, err := validate.CompileStruct[Misfit](); return err }, "Misfit", "Qty", "email"},
		{func() error { _, err := validate.CompileStruct[BadParam](); return err }, "BadParam", "Qty", "min=abc"},
		{func() error { _, err := validate.CompileQueryStruct[BadRegexp](); return err }, "BadRegexp", "Code", "pattern:^[A-Z+$"},
		{func() error {
			_, err := tagengine.For[validate.Issue]().Body(reflect.TypeFor[DiveScalar]())
			return err
		}, "DiveScalar", "Name", "dive"},
		{func() error { _, err := validate.CompileStruct[Alternatives](); return err }, "Alternatives", "Color", "hexcolor|rgb"},
	}
	for _, c := range cases {
		err := c.err()
		var te *validate.TagError
		if !errors.As(err, &te) {
			t.Fatalf("%s: got %v, want a *TagError", c.typ, err)
		}
		if !strings.HasSuffix(te.Type.String(), c.typ) || te.Field != c.field || te.Word != c.word {
			t.Errorf("got %+v, want %s.%s word %q", te, c.typ, c.field, c.word)
		}
		if msg := err.Error(); !strings.Contains(msg, c.typ) || !strings.Contains(msg, c.field) || !strings.Contains(msg, c.word) {
			t.Errorf("message %q does not name type, field and word", msg)
		}
	}
	defer func() {
		r := recover()
		err, _ := r.(error)
		var te *validate.TagError
		if !errors.As(err, &te) || te.Word != "iscolor" {
			t.Errorf("Struct panicked with %v, want the *TagError", r)
		}
	}()
	validate.Struct[Unknown]()
}

type order struct {
	Customer string      `json:"customer" validate:"required,max=10"`
	Quantity int         `json:"quantity" validate:"min=1"`
	Items    []orderItem `json:"items" validate:"required,dive"`
}

type orderItem struct {
	Name  string  `json:"name" validate:"required,min=2"`
	Price float64 `json:"price" validate:"gt=0"`
}

// TestTypeAndRuleIssuesTogether: a type error does not hide the rule
// errors of the fields that type-checked; nothing is reported twice at a
// mistyped path.
func TestTypeAndRuleIssuesTogether(t *testing.T) {
	got := tagIssues[order](t, `{"quantity":1.5,"customer":"a very long name","items":[{"name":"x","price":"free"},{"name":5,"price":-1}]}`, 0)
	want := []string{
		"items.0.price: Expected a number, got a string",
		"items.1.name: Expected a string, got a number",
		"quantity: Expected an integer, got 1.5",
		"customer: Must be at most 10 characters long",
		"items.0.name: Must be at least 2 characters long",
		"items.1.price: Must be greater than 0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// fx.Op's body decoder gives the same.
	td, _ := tagengine.For[validate.Issue]().Body(reflect.TypeFor[order]())
	var o order
	issues, _ := td.DecodeAt([]byte(`{"quantity":1.5,"customer":"a very long name","items":[{"name":"x","price":"free"},{"name":5,"price":-1}]}`), unsafe.Pointer(&o), nil, 0)
	if g := lines(validate.Result{Issues: issues}); strings.Join(g, "\n") != strings.Join(want, "\n") {
		t.Errorf("fx.Op's body decoder: got\n%s", strings.Join(g, "\n"))
	}
}

// TestTagIssuesBounded: rule issues stop at the limit, with type issues
// first.
func TestTagIssuesBounded(t *testing.T) {
	body := `{"customer":"","quantity":0,"items":[{},{},{},{},{},{},{},{}]}`
	if got := tagIssues[order](t, body, 3); len(got) != 3 {
		t.Errorf("limit 3: got %d issues: %v", len(got), got)
	}
	if got := tagIssues[order](t, body, 0); len(got) != 2+16 {
		t.Errorf("no limit: got %d issues: %v", len(got), got)
	}
	// type issues fill the list: no rule is reported
	got := tagIssues[order](t, `{"customer":1,"quantity":"x","items":[{"name":1}]}`, 2)
	if len(got) != 2 || !strings.Contains(got[0], "Expected") || !strings.Contains(got[1], "Expected") {
		t.Errorf("got %v", got)
	}
}

// TestQueryStructTags: query strings are coerced, then the tags checked.
func TestQueryStructTags(t *testing.T) {
	type Q struct {
		Limit int      `json:"limit" validate:"omitempty,min=1,max=100"`
		Sort  string   `json:"sort" validate:"required,oneof=asc desc"`
		Tags  []string `json:"tag" validate:"max=2,dive,alphanum"`
	}
	s := validate.QueryStruct[Q]()
	res := s.Validate(map[string]any{"limit": "500", "tag": []string{"a", "b-"}})
	want := "limit: Must be at most 100\nsort: Required\ntag.1: Must contain only ASCII letters and digits"
	if got := strings.Join(lines(res), "\n"); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	res = s.Validate(map[string]any{"limit": "x", "sort": "up"})
	want = "limit: Expected an integer, got \"x\"\nsort: Must be one of: \"asc\", \"desc\""
	if got := strings.Join(lines(res), "\n"); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestTypesOnlyIgnoresTags: an adapter's type-only schema neither checks
// nor rejects constraint tags.
func TestTypesOnlyIgnoresTags(t *testing.T) {
	type T struct {
		Name string `json:"name" validate:"required,iscolor"`
	}
	res := validate.Struct[T](validate.TypesOnly()).ValidateJSON([]byte(`{}`))
	if len(res.Issues) > 0 {
		t.Errorf("got %v", res.Issues)
	}
}

// TestTagChecksDoNotAllocate: on a valid body the constraint checks add
// no allocation to the decode.
func TestTagChecksDoNotAllocate(t *testing.T) {
	body := []byte(`{"customer":"ada","quantity":2,"items":[{"name":"tea","price":2.5},{"name":"cup","price":4}]}`)
	withRules, typesOnly := validate.Struct[order](), validate.Struct[order](validate.TypesOnly())
	if res := withRules.ValidateJSON(body); len(res.Issues) > 0 {
		t.Fatal(res.Issues)
	}
	a := testing.AllocsPerRun(200, func() { withRules.ValidateJSON(body) })
	b := testing.AllocsPerRun(200, func() { typesOnly.ValidateJSON(body) })
	if a != b {
		t.Errorf("constraints cost %v allocations per body (types only: %v)", a-b, b)
	}
}

// TestTagJSONSchema: every constraint becomes its JSON Schema keyword,
// from the same plan; a field whose zero value (what an absent key
// leaves) fails its rules is required: kind, code, qty and exact too,
// not email or opt (omitempty).
func TestTagJSONSchema(t *testing.T) {
	type S struct {
		Name   string            `json:"name" validate:"required,min=2,max=20" doc:"Display name" example:"Ada"`
		Email  string            `json:"email" validate:"omitempty,email"`
		Kind   string            `json:"kind" validate:"oneof=a b"`
		Code   string            `json:"code" validate:"startswith=X" pattern:"^[A-Z]+$"`
		Qty    int32             `json:"qty" validate:"gte=1,lt=10" example:"3"`
		Exact  uint8             `json:"exact" validate:"eq=4"`
		Tags   []string          `json:"tags" validate:"required,max=3,unique,dive,uuid"`
		Opt    []int             `json:"opt" validate:"omitempty"`
		PtrMap *map[string]int64 `json:"ptrMap"`
	}
	got := jsonOf(t, validate.Struct[S]().JSONSchema())
	want := `{"properties":{` +
		`"code":{"allOf":[{"pattern":"^[A-Z]+$"}],"pattern":"^X","type":"string"},` +
		`"email":{"else":{"format":"email"},"if":{"const":""},"type":"string"},` + // omitempty: "" skips the format
		`"exact":{"const":4,"format":"int32","maximum":255,"minimum":0,"type":"integer"},` +
		`"kind":{"enum":["a","b"],"type":"string"},` +
		`"name":{"description":"Display name","examples":["Ada"],"maxLength":20,"minLength":2,"type":"string"},` +
		`"opt":{"items":{"format":"int64","maximum":9007199254740992,"minimum":-9007199254740992,"type":"integer"},"type":["array","null"]},` +
		`"ptrMap":{"additionalProperties":{"format":"int64","maximum":9007199254740992,"minimum":-9007199254740992,"type":"integer"},"type":["object","null"]},` +
		`"qty":{"examples":[3],"exclusiveMaximum":10,"format":"int32","maximum":2147483647,"minimum":1,"type":"integer"},` +
		`"tags":{"items":{"format":"uuid","type":"string"},"maxItems":3,"type":"array","uniqueItems":true}},` +
		`"required":["name","kind","code","qty","exact","tags"],"type":"object"}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestBuilderFormat: the builder's formats are the tags' checks, and the
// JSON Schema format keyword.
func TestBuilderFormat(t *testing.T) {
	s := validate.Object(validate.Fields{
		"email": validate.String().Format(validate.FormatEmail),
		"id":    validate.String().Format(validate.FormatUUID).Optional(),
		"ip":    validate.String().Format(validate.FormatIPv6).Optional(),
	})
	res := s.Validate(map[string]any{"email": "a@b", "id": "123e4567-e89b-12d3-a456-426614174000", "ip": "1.2.3.4"})
	want := "email: Must be a valid email address\nip: Must be a valid IPv6 address"
	if got := strings.Join(lines(res), "\n"); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if res := s.Validate(map[string]any{"email": "a@b.co"}); len(res.Issues) > 0 {
		t.Errorf("valid: %v", res.Issues)
	}
	if f := validate.String().Format(validate.FormatEmail).JSONSchema()["format"]; f != "email" {
		t.Errorf("format keyword %v", f)
	}
	defer func() {
		if recover() == nil {
			t.Error("unknown format accepted")
		}
	}()
	validate.String().Format("color")
}

// TestEmailCheckDoesNotAllocate: the email word, like the other checks,
// costs no allocation on an address that passes (it once split the
// address into slices).
func TestEmailCheckDoesNotAllocate(t *testing.T) {
	type contact struct {
		Email string `json:"email" validate:"required,email"`
	}
	withRules, typesOnly := validate.Struct[contact](), validate.Struct[contact](validate.TypesOnly())
	body := []byte(`{"email":"ada.lovelace@mail.example.com"}`)
	if res := withRules.ValidateJSON(body); len(res.Issues) > 0 {
		t.Fatal(res.Issues)
	}
	a := testing.AllocsPerRun(200, func() { withRules.ValidateJSON(body) })
	b := testing.AllocsPerRun(200, func() { typesOnly.ValidateJSON(body) })
	if a != b {
		t.Errorf("email costs %v allocations per address", a-b)
	}
}

type shadowInner struct {
	Name string `json:"name" validate:"required"`
	Note string `json:"note" validate:"max=3"`
}

type shadowOuter struct {
	shadowInner
	Name string `json:"name"`
	Note string `json:"note"`
}

// TestShadowedRequiredFieldIsAStartUpError: Outer.Name holds the JSON name
// "name", so Inner.Name is never set; its required would refuse every body
// ("name: Required" for {"name":"x"}). It is refused when the schema is
// built, naming both fields; a shadowed field with rules that pass on its
// zero value (max=3) is not an error.
func TestShadowedRequiredFieldIsAStartUpError(t *testing.T) {
	_, err := validate.CompileStruct[shadowOuter]()
	var te *validate.TagError
	if !errors.As(err, &te) {
		t.Fatalf("CompileStruct: %v, want a *TagError", err)
	}
	for _, want := range []string{"shadowInner", "field Name", `"required"`, `the key "name" sets validate_test.shadowOuter.Name`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "Note") {
		t.Errorf("error %q names the shadowed field without required", err)
	}
	if _, err := tagengine.For[validate.Issue]().Body(reflect.TypeFor[shadowOuter]()); err == nil {
		t.Error("fx.Op's body decoder accepted the type")
	}
}

type taggedEmbedOuter struct {
	shadowInner `validate:"required"`
	ID          int `json:"id"`
}

// TestEmbeddedStructTagIsAStartUpError: the fields of an embedded struct
// are its outer object's in JSON (the decoder and the document flatten
// them), so a rule on the embedded struct itself has no value to check:
// it is refused when the schema is built, not run under a path segment
// ("shadowInner") that no body has.
func TestEmbeddedStructTagIsAStartUpError(t *testing.T) {
	_, err := validate.CompileStruct[taggedEmbedOuter]()
	var te *validate.TagError
	if !errors.As(err, &te) || te.Field != "shadowInner" {
		t.Fatalf("CompileStruct: %v, want a *TagError at field shadowInner", err)
	}
}
