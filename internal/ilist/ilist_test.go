package ilist

import (
	"slices"
	"testing"
)

type elem struct {
	id   int
	node Node[*elem]
}

func newElem(id int) *elem {
	e := &elem{id: id}
	e.node.Value = e
	return e
}

func ids(l *List[*elem]) (out []int) {
	l.Each(func(e *elem) { out = append(out, e.id) })
	return out
}

// TestList: elements come out the last pushed first; removing the head,
// a middle and the tail element keeps the others linked both ways; a
// removed element can be pushed again and removing it twice does nothing.
func TestList(t *testing.T) {
	var l List[*elem]
	es := []*elem{newElem(1), newElem(2), newElem(3), newElem(4)}
	for _, e := range es {
		l.Push(&e.node)
	}
	if got := ids(&l); !slices.Equal(got, []int{4, 3, 2, 1}) {
		t.Fatalf("after pushes: %v", got)
	}
	l.Remove(&es[3].node) // the head
	l.Remove(&es[1].node) // a middle one
	if got := ids(&l); !slices.Equal(got, []int{3, 1}) {
		t.Fatalf("after removing 4 and 2: %v", got)
	}
	l.Remove(&es[1].node) // again: nothing
	if es[1].node.Listed() || !es[0].node.Listed() {
		t.Fatalf("Listed: removed %v, kept %v", es[1].node.Listed(), es[0].node.Listed())
	}
	l.Remove(&es[0].node) // the tail
	l.Push(&es[1].node)
	if got := ids(&l); !slices.Equal(got, []int{2, 3}) {
		t.Fatalf("after removing 1 and pushing 2 again: %v", got)
	}
	if es[2].node.next != nil || es[2].node.prev != &es[1].node {
		t.Fatal("the tail's links are wrong after the head was replaced")
	}
	l.Remove(&es[1].node)
	l.Remove(&es[2].node)
	if got := ids(&l); len(got) != 0 || l.head != nil {
		t.Fatalf("after removing all: %v", got)
	}
}

// TestNoAllocation: pushing and removing allocate nothing.
func TestNoAllocation(t *testing.T) {
	var l List[*elem]
	e := newElem(1)
	if n := testing.AllocsPerRun(100, func() { l.Push(&e.node); l.Remove(&e.node) }); n != 0 {
		t.Errorf("%v allocations per push and remove", n)
	}
}
