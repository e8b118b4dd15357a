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
