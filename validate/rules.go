package validate

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"unsafe"

	"github.com/fxhq/fx/internal/jsontree"
)

// Running a compiled plan (plan_rules.go) over a decoded value: no reflection
// on slices, structs and scalars (offsets and typed loads), a walker from
// a pool, and a path rendered only when an issue is reported. Cost on a
// value that passes: no allocation and no walker (passes reads the plan
// alone), unless a rule itself allocates (url, uri) or a map is visited
// (map entries are read through reflect, one allocation per entry
// visited). On a value that fails: its rules up to the first failure run
// twice (passes, then the walk), one allocation for the first eight
// issues and one for their paths (up to 16 segments).

// walker is the state of one run.
type walker struct {
	issueList
	path []seg
	// skip holds the paths that already have a type issue: nothing at or
	// below them is checked (their value was replaced by null to decode).
	skip  *jsontree.Paths
	nodes []*jsontree.Paths
	// segs is where the issues' paths are cut from (one allocation for
	// the paths of several issues); it is dropped at the end of a run,
	// since the paths leave with the issues.
	segs []string
}

// seg is one path segment: a JSON name, or an index when name is "".
type seg struct {
	name string
	idx  int
}

var walkers = sync.Pool{New: func() any { return &walker{path: make([]seg, 0, 16)} }}

// run checks the value at p with v, after the issues prior (type issues,
// kept first), stopping at max issues (0: no limit). skip lists paths not
// to check (the paths of prior). It returns prior plus the rule issues.
func (v *vplan) run(p unsafe.Pointer, prior []Issue, max int, skip [][]string) []Issue {
	if v == nil || (max > 0 && len(prior) >= max) {
		return prior
	}
	if len(skip) == 0 && v.passes(p) {
		return prior // the common case, without a walker or paths
	}
	w := walkers.Get().(*walker)
	w.issues, w.max = prior, max
	if len(skip) > 0 {
		w.skip = jsontree.NewPaths(skip)
		w.nodes = append(w.nodes[:0], w.skip)
	}
	v.check(p, w)
	out := w.issues
	w.issues, w.skip, w.path, w.segs = nil, nil, w.path[:0], nil
	clear(w.nodes)
	w.nodes = w.nodes[:0]
	walkers.Put(w)
	return out
}

func (w *walker) add(msg string) {
	if w.full() {
		return
	}
	n := len(w.path)
	if cap(w.segs)-len(w.segs) < n {
		w.segs = make([]string, 0, max(16, n))
	}
	path := w.segs[len(w.segs) : len(w.segs)+n : len(w.segs)+n]
	w.segs = w.segs[:len(w.segs)+n]
	if len(w.issues) == cap(w.issues) && len(w.issues) < 8 {
		w.issues = slices.Grow(w.issues, 8-len(w.issues)) // one allocation for the first eight
	}
	for i, s := range w.path {
		if s.name == "" {
			path[i] = strconv.Itoa(s.idx)
		} else {
			path[i] = s.name
		}
	}
	w.issues = append(w.issues, Issue{Path: path, Message: msg}) // path is never nil here
}

// enter pushes a segment; it reports false when the segment is one of
// the skipped paths (leave must still be called).
func (w *walker) enter(name string, idx int) bool {
	w.path = append(w.path, seg{name, idx})
	if w.skip == nil {
		return true
	}
	cur := w.nodes[len(w.nodes)-1]
	var next *jsontree.Paths
	if cur.Branches() {
		key := name
		if name == "" {
			key = strconv.Itoa(idx)
		}
		next = cur.Child(key)
	}
	w.nodes = append(w.nodes, next)
	return !next.Ends()
}

func (w *walker) leave() {
	w.path = w.path[:len(w.path)-1]
	if w.skip != nil {
		w.nodes = w.nodes[:len(w.nodes)-1]
	}
}

// check runs the plan over the value at p.
func (v *vplan) check(p unsafe.Pointer, w *walker) {
	p, msg, deeper := v.rulesAt(p)
	if msg != "" {
		w.add(msg)
		return
	}
	if !deeper {
		return
	}
	if v.elem != nil || v.keys != nil {
		v.each(p, w)
	}
	if v.sub != nil {
		v.sub.check(p, w)
	}
}

// passes reports whether check would find no issue in the value at p,
// without a walker: it stops at the first failure (which check then
// walks again for the issues) and answers false for a map with entries
// to check (check visits them in order, through reflect).
func (v *vplan) passes(p unsafe.Pointer) bool {
	if v.ptr || len(v.rules) > 0 { // else nothing of rulesAt's to run: a struct's or an element's fields
		q, msg, deeper := v.rulesAt(p)
		if msg != "" {
			return false
		}
		if !deeper {
			return true
		}
		p = q
	}
	switch {
	case v.kind == tMap && (v.elem != nil || v.keys != nil):
		if *(*unsafe.Pointer)(p) != nil && reflect.NewAt(v.t, p).Elem().Len() > 0 {
			return false
		}
	case v.elem != nil && (v.kind == tSlice || v.kind == tArray):
		data, n := p, v.n
		if v.kind == tSlice {
			data, n = *(*unsafe.Pointer)(p), (*[3]int)(p)[1]
		}
		for i := 0; i < n; i++ {
			if !v.elem.passes(unsafe.Add(data, uintptr(i)*v.size)) {
				return false
			}
		}
	}
	if v.sub != nil {
		for i := range v.sub.fields {
			f := &v.sub.fields[i]
			switch {
			case f.v == nil:
			case f.v.ptr || !f.v.leaf():
				if !f.v.passes(unsafe.Add(p, f.off)) {
					return false
				}
			default: // rules only: no call to rulesAt
				if i, _ := f.v.failing(unsafe.Add(p, f.off)); i >= 0 {
					return false
				}
			}
		}
	}
	return true
}

// rulesAt runs v's own rules over the value at p: msg is the issue of
// the first that fails, and deeper reports that the elements and fields
// are to be checked (at q: p, or where the pointer at p points).
func (v *vplan) rulesAt(p unsafe.Pointer) (q unsafe.Pointer, msg string, deeper bool) {
	if v.ptr {
		if p = *(*unsafe.Pointer)(p); p == nil {
			// validator: a nil pointer passes only an omitempty first word;
			// any other word fails (its own message; required's "Required")
			if len(v.rules) > 0 && !v.rules[0].omit {
				if msg = v.rules[0].msg; !v.rules[0].req {
					msg = "Required"
				}
			}
			return nil, msg, false
		}
	}
	i, omitted := v.failing(p)
	if i >= 0 {
		return p, v.rules[i].msg, false
	}
	return p, "", !omitted
}

// failing runs v's rules in order over the value at p (not a nil
// pointer): i is the index of the first that fails, or -1; omitted
// reports that an omitempty word stopped them, the value having none.
func (v *vplan) failing(p unsafe.Pointer) (i int, omitted bool) {
	for i := range v.rules {
		r := &v.rules[i]
		if r.omit {
			if !v.ptr && !hasValueAt(v, p) {
				return -1, true
			}
			continue
		}
		if !r.ok(p) {
			return i, false
		}
	}
	return -1, false
}

// leaf reports whether v has only its own rules (no elements, keys or
// fields to visit).
func (v *vplan) leaf() bool { return v.elem == nil && v.keys == nil && v.sub == nil }

// hasValueAt is hasValue without a compiled closure (omitempty is rare
// enough not to keep one).
func hasValueAt(v *vplan, p unsafe.Pointer) bool {
	switch v.kind {
	case tString:
		return len(*(*string)(p)) != 0
	case tSlice, tMap:
		return *(*unsafe.Pointer)(p) != nil
	case tBool:
		return *(*bool)(p)
	}
	return !reflect.NewAt(v.t, p).Elem().IsZero()
}

// each checks the elements (and map keys) of the container at p.
func (v *vplan) each(p unsafe.Pointer, w *walker) {
	switch v.kind {
	case tSlice, tArray:
		data, n := p, v.n
		if v.kind == tSlice {
			data, n = *(*unsafe.Pointer)(p), (*[3]int)(p)[1]
		}
		for i := 0; i < n && !w.full(); i++ {
			if w.enter("", i) && v.elem != nil {
				v.elem.check(unsafe.Add(data, uintptr(i)*v.size), w)
			}
			w.leave()
		}
	case tMap:
		m := reflect.NewAt(v.t, p).Elem()
		keys := m.MapKeys()
		names := make([]string, len(keys))
		for i, k := range keys {
			names[i] = fmt.Sprint(k.Interface())
		}
		order := make([]int, len(keys))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return cmp.Compare(names[a], names[b]) })
		kv, ev := reflect.New(v.t.Key()).Elem(), reflect.New(v.t.Elem()).Elem()
		for _, i := range order {
			if w.full() {
				return
			}
			if w.enter(names[i], 0) {
				if v.keys != nil {
					kv.Set(keys[i])
					v.keys.check(kv.Addr().UnsafePointer(), w)
				}
				if v.elem != nil {
					ev.Set(m.MapIndex(keys[i]))
					v.elem.check(ev.Addr().UnsafePointer(), w)
				}
			}
			w.leave()
		}
	}
}

func (s *splan) check(p unsafe.Pointer, w *walker) {
	for i := range s.fields {
		f := &s.fields[i]
		if f.v == nil {
			continue
		}
		if w.full() {
			return
		}
		if f.name == "" { // embedded pointer struct: no segment
			f.v.check(unsafe.Add(p, f.off), w)
			continue
		}
		if w.skip == nil && f.v.leaf() {
			// its segment is pushed only for an issue's path
			if _, msg, _ := f.v.rulesAt(unsafe.Add(p, f.off)); msg != "" {
				w.enter(f.name, 0)
				w.add(msg)
				w.leave()
			}
			continue
		}
		if w.enter(f.name, 0) {
			f.v.check(unsafe.Add(p, f.off), w)
		}
		w.leave()
	}
}

// issuePaths lists the paths of issues.
func issuePaths(issues []Issue) [][]string {
	paths := make([][]string, len(issues))
	for i, is := range issues {
		paths[i] = is.Path
	}
	return paths
}
