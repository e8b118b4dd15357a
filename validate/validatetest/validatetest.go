package validatetest

import (
	"fmt"
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
