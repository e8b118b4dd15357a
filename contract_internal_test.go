package fx

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// The insertion sort of short issue lists orders them as the stable sort
// of long ones does: equal issues (same location and path) keep their
// order, indices compare as numbers.
func TestSortIssuesShortAsStable(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	locs := []string{"body", "query", "header", "path"}
	segs := []string{"a", "b", "0", "1", "01", "10", "2"}
	for round := 0; round < 2000; round++ {
		n := r.IntN(14)
		issues := make([]ValidationIssue, n)
		for i := range issues {
			path := make([]string, r.IntN(3))
			for k := range path {
				path[k] = segs[r.IntN(len(segs))]
			}
			issues[i] = ValidationIssue{Location: locs[r.IntN(len(locs))], Path: path, Message: string(rune('A' + i))}
		}
		want := slices.Clone(issues)
		slices.SortStableFunc(want, func(a, b ValidationIssue) int { return compareIssues(&a, &b) })
		sortIssues(issues)
		for i := range issues {
			if issues[i].Message != want[i].Message {
				t.Fatalf("round %d: got %v, want %v", round, issues, want)
			}
		}
	}
}
