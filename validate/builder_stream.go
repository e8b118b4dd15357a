package validate

import (
	"slices"
	"strconv"
	"strings"
	"unsafe"
)

// The byte path of the built-in schemas and of Struct's failure path:
// validation driven by the schema straight over the body bytes, without
// the generic tree. It exists for bounded error work: decoding 4 MiB of
// `[{},{},...]` into a tree is 1.4 million maps and a 22 MB slice before
// the first issue is found; walking the bytes allocates only the values
// the schema looks at, and stops at the issue limit.
//
// The input has been accepted by CheckJSON (one well-formed value, no
// duplicate keys, valid UTF-8), so the cursor (strict_cursor.go) does not
// check the grammar again. Every function gives the issues the tree path gives for
// DecodeJSON(body), in the same order: objects are visited in sorted key
// order, arrays by index, scalars go through the same check.

// streamTop is validateTop over bytes: null is absence. The walk reads
// a body whose grammar CheckJSON accepted (on `[1,2` it would look for
// the closing bracket past the end), so a malformed body gets
// DecodeJSON's answer first: the body's only grammar pass (fx does
// not check it again: the builders are GrammarCheckers).
func streamTop(s checker, body []byte, max int) Result {
	if err := CheckJSON(body); err != nil {
		return jsonErrorResult(err)
	}
	c := newCursor(body)
	st := newState(false, max)
	var out any
	if c.peek() == 'n' {
		out, _ = missing(s.base(), st)
	} else {
		out = streamCheck(s, c, st)
	}
	if st.err != nil {
		return Fail(st.err)
	}
	if len(st.issues) > 0 {
		return Result{Issues: st.issues}
	}
	return Result{Value: out}
}

// streamCheck is run over bytes: it validates the value at pos with s and
// moves past it (or, once the issue limit is reached, leaves pos anywhere:
// every caller stops then).
func streamCheck(s Schema, c *cursor, st *state) any {
	ch, ok := s.(checker)
	if !ok {
		return run(s, c.decode(), st) // a foreign schema receives its subtree
	}
	b := c.peek()
	switch sc := ch.(type) {
	case *ObjectSchema:
		if b == '{' {
			if sc.query || st.query { // query coercion: the tree path
				return ch.check(c.decode(), st)
			}
			return sc.stream(c, st)
		}
	case *ArraySchema:
		if b == '[' {
			if st.query {
				return ch.check(c.decode(), st)
			}
			return sc.stream(c, st)
		}
	}
	if v, ok := placeholder(b); ok {
		c.SkipValue()
		return ch.check(v, st) // a kind mismatch: nothing to decode
	}
	return ch.check(c.decode(), st)
}

func (s *ArraySchema) stream(c *cursor, st *state) any {
	// Count only as far as the bounds need (MinItems(1): one element), so
	// the elements are not scanned twice.
	if s.minItems >= 0 || s.maxItems >= 0 {
		n, end := c.elements(max(s.minItems, s.maxItems+1))
		if !s.sizeFits(n, st) {
			c.Pos = end
			return nil
		}
	}
	before := len(st.issues)
	var out []any
	c.SkipSpace()
	c.Pos++ // [
	for i := 0; c.peek() != ']'; i++ {
		if st.full() {
			return nil // pos is left inside the array: every caller stops
		}
		st.push(strconv.Itoa(i))
		e := streamCheck(s.elem, c, st)
		st.pop()
		if len(st.issues) == before {
			out = append(out, e)
		}
		if c.peek() == ',' {
			c.Pos++
		}
	}
	c.Pos++ // ]
	return s.finish(out, before, st)
}

func (s *ObjectSchema) stream(c *cursor, st *state) any {
	var small [8]int
	at := small[:0]
	if len(s.keys) > len(small) {
		at = make([]int, 0, len(s.keys))
	}
	for range s.keys {
		at = append(at, -1)
	}
	start := c.Pos
	unknown := false
	c.members(func(key []byte, pos int) {
		if i, ok := slices.BinarySearch(s.keys, bytesKey(key)); ok {
			at[i] = pos
		} else {
			unknown = true
		}
	})
	end := c.Pos
	before := len(st.issues)
	out := make(map[string]any, len(s.fields))
	for i, k := range s.keys {
		if st.full() {
			break
		}
		fs := s.fields[k]
		st.push(k)
		if at[i] < 0 {
			absent(k, fs, out, st)
		} else {
			c.Pos = at[i]
			out[k] = streamCheck(fs, c, st)
		}
		st.pop()
	}
	if s.strict && unknown && !st.full() {
		s.reportUnknown(func(yield func(string) bool) {
			c.Pos = start
			stop := false
			c.members(func(key []byte, _ int) {
				if stop {
					return
				}
				if _, known := s.fields[bytesKey(key)]; !known {
					k := bytesKey(key)
					if unsafe.SliceData(key) == unsafe.SliceData(c.key) { // the scratch buffer: copy it
						k = strings.Clone(k)
					}
					stop = !yield(k)
				}
			})
		}, st)
	}
	c.Pos = end
	return s.finish(out, before, st)
}

// ValidateJSON is Validate(DecodeJSON(body)) computed over the bytes (see
// Decoder): the schema walks the body, decoding only the values it checks.
func (s *ObjectSchema) ValidateJSON(body []byte) Result { return s.ValidateJSONLimit(body, 0) }

// ValidateJSONLimit is ValidateJSON stopping at max issues (see
// LimitedDecoder).
func (s *ObjectSchema) ValidateJSONLimit(body []byte, max int) Result {
	if s.query {
		v, err := DecodeJSON(body)
		if err != nil {
			return jsonErrorResult(err)
		}
		return s.ValidateLimit(v, max)
	}
	return streamTop(s, body, max)
}

// ChecksGrammar reports true: ValidateJSON checks the grammar of every
// body before its walk (see GrammarChecker), so fx does not check it
// again.
func (s *ObjectSchema) ChecksGrammar() bool { return true }

// ValidateJSON is Validate(DecodeJSON(body)) computed over the bytes.
func (s *ArraySchema) ValidateJSON(body []byte) Result { return streamTop(s, body, 0) }

// ValidateJSONLimit is ValidateJSON stopping at max issues.
func (s *ArraySchema) ValidateJSONLimit(body []byte, max int) Result {
	return streamTop(s, body, max)
}

// ChecksGrammar reports true, as ObjectSchema's does.
func (s *ArraySchema) ChecksGrammar() bool { return true }
