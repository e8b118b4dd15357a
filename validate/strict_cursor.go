package validate

import (
	"unsafe"

	"github.com/fxhq/fx/internal/jsonscan"
)

// The cursor over a body whose grammar CheckJSON accepted: the builders'
// byte path (builder_stream.go) and the strict walk's sorted listing of
// an object (typecheck_bytes.go) read keys and skip values through it;
// it does not check the grammar again.

// cursor is internal/jsonscan's Cursor with what the byte path adds:
// keys unescaped into a scratch buffer, and peek past white space.
type cursor struct {
	jsonscan.Cursor
	key []byte // scratch for unescaped keys
}

func newCursor(body []byte) *cursor { return &cursor{Cursor: jsonscan.Cursor{Data: body}} }

// peek returns the first byte of the value at Pos (after white space).
func (c *cursor) peek() byte {
	c.SkipSpace()
	return c.Peek()
}

// keyOf returns the unescaped key of a member's raw text (as SkipString
// returns it): it aliases the input or the scratch buffer.
func (c *cursor) keyOf(raw []byte, esc bool) []byte {
	if esc {
		return c.unescapeKey(raw[1 : len(raw)-1])
	}
	return raw[1 : len(raw)-1] // inlined: most keys have no escape
}

func (c *cursor) unescapeKey(key []byte) []byte {
	c.key = jsonscan.Unescape(c.key[:0], key)
	return c.key
}

// decode decodes the value at pos as DecodeJSON does (a scalar, or the
// subtree a foreign schema receives) and moves past it.
func (c *cursor) decode() any {
	c.SkipSpace()
	start := c.Pos
	c.SkipValue()
	v, _ := DecodeJSON(c.Data[start:c.Pos]) // accepted by CheckJSON already
	return v
}

// placeholder stands for a container value whose kind is all a check
// needs (a type mismatch): nothing is decoded.
func placeholder(b byte) (any, bool) {
	switch b {
	case '{':
		return map[string]any(nil), true
	case '[':
		return []any(nil), true
	}
	return nil, false
}

// members calls fn for each member of the object at Pos with its key
// (unescaped; it aliases the input or a scratch buffer, valid only during
// the call) and the position of its value, and moves past the object.
func (c *cursor) members(fn func(key []byte, at int)) {
	c.SkipSpace()
	c.Members(func(raw []byte, esc bool) bool {
		at := c.Pos
		c.SkipValue()
		fn(c.keyOf(raw, esc), at)
		return true
	})
}

// elements counts the elements of the array at Pos, up to limit (then n
// is limit+1 and end is -1: the rest is not scanned), and returns the
// position after the array, without moving.
func (c *cursor) elements(limit int) (n, end int) {
	save := c.Pos
	c.SkipSpace()
	c.Elements(func() bool {
		c.SkipValue()
		n++
		return n <= limit
	})
	end = c.Pos
	if n > limit {
		end = -1
	}
	c.Pos = save
	return n, end
}

// bytesKey views b as a string for the duration of a lookup.
func bytesKey(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
