package validate_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/fxhq/fx/validate"
	"github.com/fxhq/fx/validate/validatetest"
)

// foreignSchema is a Schema of another library nested in a builder one.
type foreignSchema struct{}

func (foreignSchema) Validate(v any) validate.Result {
	if s, ok := v.(string); ok && s == "ok" {
		return validate.Result{Value: s}
	}
	return validate.Result{Issues: []validate.Issue{{Path: []string{"x"}, Message: "Not ok"}, {Message: "Still not ok"}}}
}

var streamSchemas = map[string]validate.Schema{
	"order": orderSchema,
	"strict": validate.Object(validate.Fields{
		"a": validate.Integer().Min(1),
		"b": validate.Array(validate.String().MinLen(2)).MaxItems(5),
		"c": validate.Object(validate.Fields{"d": validate.Boolean().Nullable()}).Strict().Optional(),
		"f": foreignSchema{},
		"q": validate.Query(validate.Fields{"n": validate.Number()}).Optional(),
	}).Strict().Check(func(m map[string]any) error {
		return &validate.FieldError{Field: []string{"a"}, Message: "Never valid"}
	}),
	"array":  validate.Array(validate.Object(validate.Fields{"sku": validate.String(), "qty": validate.Integer()}).Strict()),
	"struct": validate.Struct[Order](),
}

var streamBodies = []string{
	`{"name":"Ada","price":2.5,"items":[{"sku":"A","qty":1e1}],"note":null,"extra":1}`,
	`{"name":"","kind":"car","code":"ab","price":"3","gift":1,"items":[{"sku":"A","qty":0},{"qty":1.5,"color":"red","size":2}],"even":3}`,
	`{"items":[{},{},{"sku":1},{"qty":"x","z\u0041":1,"":2}, [], "s", null, 3]}`,
	`{"a":0,"b":["x","yy",3,{},[]],"c":{"d":null,"e":1,"\u00e9":2},"f":"no","q":{"n":"5"},"zz":1,"yy":{"deep":[1,2]}}`,
	`{"a":2,"b":["aa"],"f":"ok"}`,
	`{"b":[1,2,3,4,5,6],"c":[],"f":{"k":[1]}}`,
	`[{"sku":"a","qty":1},{"sku":2,"qty":1.5,"x":1},{},[],"s",1,true,null]`,
	`[]`, `{}`, `null`, `"str"`, `12`, `true`, `[[[]]]`,
	`{"id":-1,"name":5,"price":"x","gift":"no","lines":[{"sku":"a","qty":1},{"sku":2,"qty":300},{"qty":1.5}],"labels":{"a":1,"B":[2]},"when":"yesterday","any":{"x":[1]}}`,
	`{"ID":1.5,"Name":[],"NAME":{},"lines":{"0":1},"labels":[1],"when":5}`,
	` { "lines" : [ { "sku" : 1 } , { "qty" : "2" } ] , "gift" : null } `,
}

// TestStreamSameAsTree: the byte path of every built-in Decoder gives the
// Result of the tree path, for every limit (the contract of Decoder and
// Limited: the wire result does not depend on the path).
func TestStreamSameAsTree(t *testing.T) {
	for name, s := range streamSchemas {
		d := s.(validate.Decoder)
		for _, body := range streamBodies {
			tree, err := validate.DecodeJSON([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			for _, max := range []int{0, 1, 2, 3, 4, 7, 100} {
				want := validate.ValidateMax(s, tree, max)
				got := validate.ValidateJSONMax(d, []byte(body), max)
				if !sameResult(got, want) {
					t.Errorf("%s max=%d %s\n bytes %+v\n tree  %+v", name, max, body, got, want)
				}
				if max > 0 && len(got.Issues) > max {
					t.Errorf("%s max=%d: %d issues", name, max, len(got.Issues))
				}
			}
		}
	}
}

func sameResult(a, b validate.Result) bool {
	if len(a.Issues) > 0 || len(b.Issues) > 0 {
		return reflect.DeepEqual(a.Issues, b.Issues)
	}
	return reflect.DeepEqual(a.Value, b.Value)
}

func FuzzStreamSameAsTree(f *testing.F) {
	for _, b := range streamBodies {
		f.Add(b, 3)
	}
	f.Fuzz(func(t *testing.T, body string, max int) {
		if validate.CheckJSON([]byte(body)) != nil || max < 0 || max > 50 {
			return
		}
		tree, _ := validate.DecodeJSON([]byte(body))
		for name, s := range streamSchemas {
			want := validate.ValidateMax(s, tree, max)
			got := validate.ValidateJSONMax(s.(validate.Decoder), []byte(body), max)
			if !sameResult(got, want) {
				t.Fatalf("%s max=%d %q\n bytes %+v\n tree  %+v", name, max, body, got, want)
			}
		}
	})
}

// hugeItems is the attack of the bounded-error-work defect: a body of
// size bytes of empty items under a schema that requires two fields in
// each.
func hugeItems(size int) []byte { return validatetest.HugeBody("customer", "{}", size) }

// attackSize is the size of the bounded-memory tests' hostile bodies:
// 4 MiB with FX_SLOW_TESTS=1 (.ci/run sets it), 512 KiB otherwise, so
// that `go test ./...` stays quick (what they allocate within the limit
// is ~30 KB either way). The bounds those tests check are a
// fraction of the body, not a constant, so both sizes test the same
// claim: the work stops at the limit instead of growing with the body.
func attackSize() int {
	if os.Getenv("FX_SLOW_TESTS") == "" {
		return 512 << 10
	}
	return 4 << 20
}

// hugeSchema is the schema hugeItems attacks.
var hugeSchema = validatetest.HugeSchema()

type hugeOrder struct {
	Customer string `json:"customer"`
	Items    []struct {
		SKU string `json:"sku"`
		Qty int    `json:"qty"`
	} `json:"items"`
}

func TestLimitStopsTheWork(t *testing.T) {
	size := attackSize()
	body := hugeItems(size)
	// the Struct schema fails on numbers: size bytes of 1s where objects belong
	ones := bytes.Repeat([]byte(`1,`), size/2)
	ones = append(append([]byte(`{"items":[`), ones[:len(ones)-1]...), `]}`...)
	cases := []struct {
		name string
		run  func() validate.Result
	}{
		{"builder bytes", func() validate.Result { return hugeSchema.ValidateJSONLimit(body, 101) }},
		{"builder array bytes", func() validate.Result {
			return validate.Array(validate.Integer()).ValidateJSONLimit(body[bytes.IndexByte(body, '['):len(body)-1], 101)
		}},
		{"struct bytes", func() validate.Result { return validate.Struct[hugeOrder]().ValidateJSONLimit(ones, 101) }},
	}
	for _, c := range cases {
		var res validate.Result
		n := validatetest.Allocated(func() { res = c.run() })
		if len(res.Issues) != 101 {
			t.Errorf("%s: %d issues, want 101 (the limit)", c.name, len(res.Issues))
		}
		if n > uint64(size/2) {
			t.Errorf("%s: allocated %d bytes for a %d-byte body, want under half of it", c.name, n, size)
		}
	}
	// the tree path stops too (the tree itself is the caller's)
	tree, _ := validate.DecodeJSON(body)
	var res validate.Result
	n := validatetest.Allocated(func() { res = hugeSchema.ValidateLimit(tree, 101) })
	if len(res.Issues) != 101 || n > uint64(size/4) {
		t.Errorf("tree: %d issues, %d bytes allocated", len(res.Issues), n)
	}
	st, _ := validate.DecodeJSON(ones)
	n = validatetest.Allocated(func() { res = validate.Struct[hugeOrder]().ValidateLimit(st, 101) })
	if len(res.Issues) != 101 || n > uint64(size/4) {
		t.Errorf("struct tree: %d issues, %d bytes allocated", len(res.Issues), n)
	}
}

// TestStrictUnknownKeysBounded: 330,000 unknown keys (an eighth of them
// without FX_SLOW_TESTS, see attackSize) under Strict report the smallest
// ones, sorted, up to the limit, on both paths.
func TestStrictUnknownKeysBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"customer":"x","items":[{"sku":"A-1","qty":1}]`)
	for i := range 330_000 * attackSize() / (4 << 20) {
		fmt.Fprintf(&b, `,"k%d":0`, i)
	}
	b.WriteString(`}`)
	body := []byte(b.String())
	var res validate.Result
	// ValidateJSONLimit checks the grammar first (CheckJSON: its set of
	// the object's keys is what duplicate keys are found with, ~25 bytes
	// a key); beyond that, the walk's issues stay bounded.
	grammar := validatetest.Allocated(func() { _ = validate.CheckJSON(body) })
	n := validatetest.Allocated(func() { res = hugeSchema.ValidateJSONLimit(body, 100) })
	if len(res.Issues) != 100 || n > grammar+1<<20 {
		t.Fatalf("%d issues, %d bytes allocated (%d of them the grammar check's)", len(res.Issues), n, grammar)
	}
	if res.Issues[0].Path[0] != "k0" || res.Issues[1].Path[0] != "k1" || res.Issues[2].Path[0] != "k10" {
		t.Errorf("not the smallest keys in order: %v", res.Issues[:3])
	}
	tree, _ := validate.DecodeJSON(body)
	if tr := hugeSchema.ValidateLimit(tree, 100); !reflect.DeepEqual(tr.Issues, res.Issues) {
		t.Errorf("tree path differs")
	}
}

// TestValidateMaxCutsForeignSchemas: a Schema without ValidateLimit is
// still cut to the limit.
func TestValidateMaxCutsForeignSchemas(t *testing.T) {
	res := validate.ValidateMax(foreignSchema{}, 1.0, 1)
	if len(res.Issues) != 1 {
		t.Fatalf("%d issues", len(res.Issues))
	}
	res = validate.ValidateMax(failing{}, nil, 1)
	if res.Err() == nil {
		t.Fatal("Fail lost")
	}
}

type failing struct{}

func (failing) Validate(any) validate.Result { return validate.Fail(errors.New("down")) }

func BenchmarkHugeInvalidBodySchema(b *testing.B) {
	body := hugeItems(4 << 20)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if err := validate.CheckJSON(body); err != nil {
			b.Fatal(err)
		}
		if res := hugeSchema.ValidateJSONLimit(body, 101); len(res.Issues) != 101 {
			b.Fatal(len(res.Issues))
		}
	}
}

// TestDuplicateKeyInLargeObject: past 32 keys CheckJSON detects
// duplicates with a set of key hashes (confirmed by looking back); it
// rejects exactly what DecodeJSON rejects, with the same error, escaped
// spellings of a key included.
func TestDuplicateKeyInLargeObject(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"x":{`)
	for i := range 100 {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	prefix := b.String()
	for _, c := range []struct {
		tail string
		dup  bool
	}{
		{`"k7":1}}`, true},
		{`"k\u0037":1}}`, true},
		{`"k99":1}}`, true},
		{`"k100":1}}`, false},
		{`"k7x":1,"k7":[}}`, true}, // the duplicate before the syntax error
		{`"k100":[}}`, false},
	} {
		body := []byte(prefix + c.tail)
		e1, e2 := validate.CheckJSON(body), error(nil)
		_, e2 = validate.DecodeJSON(body)
		if fmt.Sprint(e1) != fmt.Sprint(e2) {
			t.Errorf("%s: CheckJSON %v, DecodeJSON %v", c.tail, e1, e2)
		}
		if got := e1 != nil && strings.HasPrefix(e1.Error(), "Duplicate key"); got != c.dup {
			t.Errorf("%s: %v, want duplicate=%v", c.tail, e1, c.dup)
		}
		var je1, je2 *validate.JSONError
		if errors.As(e1, &je1) && errors.As(e2, &je2) && !reflect.DeepEqual(je1, je2) {
			t.Errorf("%s: %+v vs %+v", c.tail, je1, je2)
		}
	}
}
