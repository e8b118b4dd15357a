// Package jsontree holds what fx's validation does with a decoded JSON
// tree (values as validate.DecodeJSON builds them: map[string]any, []any
// and scalars) besides validating it: counting its nodes up to a bound,
// and leaving out the values at a set of paths (Hole). The validate package and its
// adapters share it; no user of fx needs it.
package jsontree

import (
	"maps"
	"slices"
	"strconv"
)

// MoreNodesThan reports whether the tree v has more than n nodes,
// counting each value once. It stops counting at n+1, so its cost is
// bounded by n whatever the size of v, and it allocates nothing.
// Adapters use it to decide whether a value is large enough for their
// bounded pre-pass.
func MoreNodesThan(v any, n int) bool {
	var count func(v any) bool
	count = func(v any) bool {
		if n--; n < 0 {
			return true
		}
		switch x := v.(type) {
		case map[string]any:
			for _, e := range x {
				if count(e) {
					return true
				}
			}
		case []any:
			for _, e := range x {
				if count(e) {
					return true
				}
			}
		}
		return false
	}
	return count(v)
}

// Paths is a set of paths (each a list of object keys and decimal array
// indices) as a trie: the paths of the type issues of a value, below
// which nothing more is checked. The nil *Paths is the empty set.
type Paths struct {
	end  bool
	kids map[string]*Paths
}

// NewPaths returns the set of paths. Cost: one node per distinct prefix.
func NewPaths(paths [][]string) *Paths {
	root := &Paths{}
	for _, p := range paths {
		n := root
		for _, s := range p {
			if n.kids == nil {
				n.kids = map[string]*Paths{}
			}
			k := n.kids[s]
			if k == nil {
				k = &Paths{}
				n.kids[s] = k
			}
			n = k
		}
		n.end = true
	}
	return root
}

// Branches reports whether some path of the set goes below n.
func (n *Paths) Branches() bool { return n != nil && n.kids != nil }

// Child returns the paths below n that continue with seg (nil: none).
func (n *Paths) Child(seg string) *Paths {
	if n == nil {
		return nil
	}
	return n.kids[seg]
}

// Ends reports whether a path of the set ends at n.
func (n *Paths) Ends() bool { return n != nil && n.end }

// Hole stands for a value left out of a tree by NullAt. It encodes as
// null, and validation reads it as the value absent: a Go field or
// element keeps its zero value, even where a null sent by a client is
// refused.
type Hole struct{}

// MarshalJSON encodes the hole as null.
func (Hole) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

// NullAt returns v with the value at each path replaced by Hole{},
// copying only the maps and slices on those paths: v itself is not
// changed. An empty path makes the whole value nil. Validation uses it to
// decode the well-typed part of a value that has type errors (a hole
// leaves a Go field's zero value and keeps array indices), so that the
// rules of those fields are still checked.
func NullAt(v any, paths [][]string) any {
	out := NewPaths(paths).apply(v)
	if out == (Hole{}) {
		return nil
	}
	return out
}

func (n *Paths) apply(v any) any {
	if n.end {
		return Hole{}
	}
	switch x := v.(type) {
	case map[string]any:
		m := maps.Clone(x)
		for k, kid := range n.kids {
			if e, ok := m[k]; ok {
				m[k] = kid.apply(e)
			}
		}
		return m
	case []any:
		a := slices.Clone(x)
		for k, kid := range n.kids {
			if i, err := strconv.Atoi(k); err == nil && i >= 0 && i < len(a) {
				a[i] = kid.apply(a[i])
			}
		}
		return a
	}
	return v
}
