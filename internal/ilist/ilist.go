// Package ilist is a doubly linked list whose links live in its elements
// (an intrusive list): an element holds a Node as a field, so adding it and
// removing it allocate nothing and take constant time, which is what a
// list touched twice per request or per connection needs. It does no
// locking; its owner holds its own lock around every call.
//
// The App's stopping state keeps the request contexts alive in such lists
// (lifecycle.go), and internal/conn a listener's open connections.
package ilist

// Node is an element's place in a List, a field of the element. Value is
// the element; the owner sets it once, when it makes the element.
type Node[E any] struct {
	prev, next *Node[E]
	listed     bool
	Value      E
}

// Listed reports whether n is in a list.
func (n *Node[E]) Listed() bool { return n.listed }

// List is a list of elements; the zero value is empty.
type List[E any] struct{ head *Node[E] }

// Push adds n at the front of l. n must not be in a list.
func (l *List[E]) Push(n *Node[E]) {
	n.prev, n.next, n.listed = nil, l.head, true
	if l.head != nil {
		l.head.prev = n
	}
	l.head = n
}

// Remove takes n out of l; nothing when n is in no list.
func (l *List[E]) Remove(n *Node[E]) {
	if !n.listed {
		return
	}
	if n.prev != nil {
		n.prev.next = n.next
	} else {
		l.head = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	}
	n.prev, n.next, n.listed = nil, nil, false
}

// Each calls f with each element's Value, the last pushed first. f must
// not add to l or remove from it.
func (l *List[E]) Each(f func(E)) {
	for n := l.head; n != nil; n = n.next {
		f(n.Value)
	}
}
