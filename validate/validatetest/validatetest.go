package validatetest

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/fxhq/fx/validate"
)

// CompareBounded returns nil when got, the issues of a validation
// stopped at max issues, agrees with whole, the issues of the same value
// validated without a bound: below max, the same issues in any order; at
// max, exactly max issues, each one of whole's, counted as a multiset.
// Two issues are the same when their Path and Message are. Otherwise the
// error says how they differ, with both lists.
//
// Cost: it sorts and counts both lists; meant for tests.
func CompareBounded(whole, got []validate.Issue, max int) error {
	if len(whole) < max {
		if w, g := Keys(whole), Keys(got); !slices.Equal(w, g) {
			return fmt.Errorf("below max %d the issues differ:\nbounded %q\nwhole   %q", max, g, w)
		}
		return nil
	}
	if len(got) != max {
		return fmt.Errorf("max %d: %d issues, the whole validation has %d", max, len(got), len(whole))
	}
	left := map[string]int{}
	for _, is := range whole {
		left[key(is)]++
	}
	for _, is := range got {
		if left[key(is)]--; left[key(is)] < 0 {
			return fmt.Errorf("max %d: %q is not an issue of the whole validation %q", max, key(is), Keys(whole))
		}
	}
	return nil
}

// CompareLimits returns nil when d's validation of body stopped at max
// issues agrees with its whole validation, Validate over the tree
// validate.DecodeJSON reads from body, on each of fx's two paths:
// ValidateJSONLimit over the bytes and, when d is also a
// validate.Limited, ValidateLimit over the tree. Each path's issues must
// agree as CompareBounded says, and when the whole validation finds no
// issue, each path must return its Value. Otherwise the error names the
// path and the body. body must be one DecodeJSON accepts.
//
// Cost: DecodeJSON of body and a validation for each path and the whole
// one; meant for tests.
func CompareLimits(d validate.LimitedDecoder, body []byte, max int) error {
	tree, err := validate.DecodeJSON(body)
	if err != nil {
		return fmt.Errorf("%.40q is not a body to validate: %v", body, err)
	}
	whole := d.Validate(tree)
	paths := map[string]validate.Result{"bytes": d.ValidateJSONLimit(body, max)}
	if l, ok := d.(validate.Limited); ok {
		paths["tree"] = l.ValidateLimit(tree, max)
	}
	for path, res := range paths {
		if err := CompareBounded(whole.Issues, res.Issues, max); err != nil {
			return fmt.Errorf("%s, %s: %w", path, body, err)
		}
		if len(whole.Issues) == 0 && !reflect.DeepEqual(res.Value, whole.Value) {
			return fmt.Errorf("%s, %s: value %#v, the whole validation's %#v", path, body, res.Value, whole.Value)
		}
	}
	return nil
}

// Keys returns the issues as sorted strings, path segments and message
// separated by control characters: two lists of issues are the same, in
// any order, when their Keys are equal.
func Keys(issues []validate.Issue) []string {
	out := make([]string, len(issues))
	for i, is := range issues {
		out[i] = key(is)
	}
	slices.Sort(out)
	return out
}

func key(is validate.Issue) string { return strings.Join(is.Path, "\x00") + "\x01" + is.Message }
