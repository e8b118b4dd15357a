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
