package validatetest_test

import (
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
