package validatetest_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/fxhq/fx/validate"
	"github.com/fxhq/fx/validate/validatetest"
)

func TestCompareBounded(t *testing.T) {
	a := validate.Issue{Path: []string{"items", "1"}, Message: "required"}
	b := validate.Issue{Path: []string{"name"}, Message: "too short"}
	c := validate.Issue{Path: []string{"qty"}, Message: "too small"}
	for _, tc := range []struct {
		name         string
		whole, got   []validate.Issue
		max          int
		wantAgreeing bool
	}{
		{"below max, same issues in another order", []validate.Issue{a, b}, []validate.Issue{b, a}, 3, true},
		{"below max, one missing", []validate.Issue{a, b}, []validate.Issue{a}, 3, false},
		{"at max, a subset", []validate.Issue{a, b, c}, []validate.Issue{c, a}, 2, true},
		{"at max, too few", []validate.Issue{a, b, c}, []validate.Issue{a}, 2, false},
		{"at max, an issue the whole lacks", []validate.Issue{a, b, c}, []validate.Issue{a, {Path: []string{"x"}, Message: "m"}}, 2, false},
		{"at max, one issue twice", []validate.Issue{a, b, c}, []validate.Issue{a, a}, 2, false},
	} {
		err := validatetest.CompareBounded(tc.whole, tc.got, tc.max)
		if (err == nil) != tc.wantAgreeing {
			t.Errorf("%s: CompareBounded = %v, want agreeing %v", tc.name, err, tc.wantAgreeing)
		}
	}
}

// skewed is a schema whose bounded validation on one path (path: "bytes"
// or "tree") returns wrong instead of its own Result.
type skewed struct {
	*validate.ObjectSchema
	path  string
	wrong validate.Result
}

func (s skewed) ValidateJSONLimit(body []byte, max int) validate.Result {
	if s.path == "bytes" {
		return s.wrong
	}
	return s.ObjectSchema.ValidateJSONLimit(body, max)
}

func (s skewed) ValidateLimit(v any, max int) validate.Result {
	if s.path == "tree" {
		return s.wrong
	}
	return s.ObjectSchema.ValidateLimit(v, max)
}

// TestCompareLimits: a built-in schema agrees with itself at every
// limit; an issue the whole validation lacks, or another value for a
// valid body, on either path, is reported, and so is a body that is not
// JSON.
func TestCompareLimits(t *testing.T) {
	s := validate.Object(validate.Fields{
		"name": validate.String().MinLen(1),
		"qty":  validate.Number().Min(1),
	})
	const invalid, valid = `{"name":"","qty":0}`, `{"name":"a","qty":1}`
	extra := validate.Result{Issues: []validate.Issue{{Path: []string{"x"}, Message: "m"}}}
	other := validate.Result{Value: map[string]any{"name": "b", "qty": 1.0}}
	for _, tc := range []struct {
		name         string
		d            validate.LimitedDecoder
		body         string
		wantAgreeing bool
	}{
		{"issues", s, invalid, true},
		{"a valid body", s, valid, true},
		{"bytes: an issue the whole lacks", skewed{s, "bytes", extra}, invalid, false},
		{"tree: an issue the whole lacks", skewed{s, "tree", extra}, invalid, false},
		{"bytes: another value", skewed{s, "bytes", other}, valid, false},
		{"tree: another value", skewed{s, "tree", other}, valid, false},
		{"not JSON", s, `{"name":`, false},
	} {
		for _, max := range []int{1, 2, 3} {
			err := validatetest.CompareLimits(tc.d, []byte(tc.body), max)
			if (err == nil) != tc.wantAgreeing {
				t.Errorf("%s, max %d: CompareLimits = %v, want agreeing %v", tc.name, max, err, tc.wantAgreeing)
			}
		}
	}
}

// TestRandomInputs: a seed always draws the same inputs, each call a new
// one, and over a few thousand bytes every byte value turns up.
func TestRandomInputs(t *testing.T) {
	draw := func(seed uint32) []string {
		var out []string
		validatetest.RandomInputs(seed, 64, 64, func(data []byte) { out = append(out, string(data)) })
		return out
	}
	a, b := draw(7), draw(7)
	if len(a) != 64 || !slices.Equal(a, b) {
		t.Fatalf("seed 7 drew %d inputs, then other ones", len(a))
	}
	if slices.Equal(a, draw(8)) {
		t.Error("seeds 7 and 8 drew the same inputs")
	}
	seen := map[string]bool{}
	var values [256]bool
	for _, in := range a {
		seen[in] = true
		for i := range len(in) {
			values[in[i]] = true
		}
	}
	if len(seen) != len(a) {
		t.Errorf("%d distinct inputs of %d", len(seen), len(a))
	}
	if missing := slices.Index(values[:], false); missing >= 0 {
		t.Errorf("byte %#x never drawn in %d bytes", missing, 64*64)
	}
}

// TestHugeSchema: the huge body of empty items has two issues an item
// under the schema (the sku and the qty it requires), and a whole order
// none.
func TestHugeSchema(t *testing.T) {
	body := validatetest.HugeBody("customer", "{}", 64)
	items := bytes.Count(body, []byte("{}"))
	tree, err := validate.DecodeJSON(body)
	if err != nil {
		t.Fatal(err)
	}
	res := validatetest.HugeSchema().Validate(tree)
	if want := 1 + 2*items; len(res.Issues) != want {
		t.Errorf("%d issues for %d empty items, want %d: %v", len(res.Issues), items, want, validatetest.Keys(res.Issues))
	}
	ok, _ := validate.DecodeJSON([]byte(`{"customer":"Ada","items":[{"sku":"A-1","qty":2}]}`))
	if res := validatetest.HugeSchema().Validate(ok); len(res.Issues) != 0 {
		t.Errorf("a valid order: %v", validatetest.Keys(res.Issues))
	}
}
