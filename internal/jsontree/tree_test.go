package jsontree_test

import (
	"testing"

	"github.com/fxhq/fx/internal/jsontree"
)

func TestMoreNodesThan(t *testing.T) {
	tree := map[string]any{"a": []any{1.0, 2.0, map[string]any{"b": nil}}, "c": "x"}
	// nodes: the object, the array, 1, 2, the inner object, nil, "x" = 7
	for n, want := range map[int]bool{0: true, 6: true, 7: false, 100: false} {
		if got := jsontree.MoreNodesThan(tree, n); got != want {
			t.Errorf("MoreNodesThan(tree, %d) = %v, want %v", n, got, want)
		}
	}
	if jsontree.MoreNodesThan(nil, 1) {
		t.Error("a null is one node")
	}
}
