package validatetest_test

import (
	"fmt"

	"github.com/fxhq/fx/validate"
	"github.com/fxhq/fx/validate/validatetest"
)

// A schema's validation stopped at one issue agrees with its whole
// validation: one issue, and one the whole validation reports.
func ExampleCompareBounded() {
	s := validate.Object(validate.Fields{
		"name": validate.String().MinLen(1),
		"qty":  validate.Number().Min(1),
	})
	v := map[string]any{"name": "", "qty": 0.0}
	whole := s.Validate(v).Issues
	bounded := s.ValidateLimit(v, 1).Issues
	fmt.Println(len(whole), len(bounded), validatetest.CompareBounded(whole, bounded, 1))
	// Output: 2 1 <nil>
}

// A schema's validation of a body stopped at max issues agrees with its
// whole validation on the bytes and on the tree: the check of a
// differential or fuzz test of a validate.Limited schema or adapter.
func ExampleCompareLimits() {
	s := validate.Object(validate.Fields{
		"name": validate.String().MinLen(1),
		"qty":  validate.Number().Min(1),
	})
	for _, max := range []int{1, 2, 3} {
		fmt.Println(max, validatetest.CompareLimits(s, []byte(`{"name":"","qty":0}`), max))
	}
	// Output:
	// 1 <nil>
	// 2 <nil>
	// 3 <nil>
}
