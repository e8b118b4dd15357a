package jsonschema

import (
	"slices"
	"strconv"

	"github.com/fxhq/fx/validate"
	js "github.com/santhosh-tekuri/jsonschema/v6"
)

// ValidateJSON is Validate(validate.DecodeJSON(body)) (validate.Decoder):
// fx hands the body bytes to the schema instead of building the generic
// tree first, so that ValidateJSONLimit can stop before building it.
func (s *Schema) ValidateJSON(body []byte) validate.Result { return s.ValidateJSONLimit(body, 0) }

// ValidateJSONLimit is ValidateJSON with at most max issues
// (validate.LimitedDecoder). On a body of more than 16·max bytes the
// pre-pass of bounded.go runs over the bytes: array elements are decoded
// (validate.DecodeJSON, as for the whole body) and validated one at a
// time, unknown keys are counted without decoding, and the pre-pass
// stops at max; only when it found fewer is the body decoded whole and
// validated as Validate does. Measured (BenchmarkHugeInvalidBodyBytes):
// the 4 MiB body of empty items never becomes a tree (before: fx decoded
// it into 1.4 million maps, 1.7 s and 210 MB, before the library ran).
func (s *Schema) ValidateJSONLimit(body []byte, max int) validate.Result {
	if max > 0 && s.safe && len(body) > smallBody*max {
		b := &pass{max: max, path: make([]string, 0, 8)}
		c := &scanner{data: body}
		if b.walkBytes(s.s, c) {
			return validate.Result{Issues: b.issues[:max:max]}
		}
	}
	tree, err := validate.DecodeJSON(body)
	if err != nil {
		// not reached for a body CheckJSON accepted (the Decoder contract)
		return validate.Result{Issues: []validate.Issue{{Path: []string{}, Message: err.Error()}}}
	}
	return s.whole(tree, max)
}

// smallBody: a body of at most smallBody·max bytes skips the pre-pass.
var smallBody = 16

// walkBytes is walk over the JSON text of one value at c.i (which it
// skips); it decodes only the array elements it validates and the keys.
func (b *pass) walkBytes(sch *js.Schema, c *scanner) bool {
	c.space()
	switch c.peek() {
	case '{':
		if !applies(sch, "object") {
			c.value()
			return false
		}
		ap, isBool := sch.AdditionalProperties.(bool)
		unknown := isBool && !ap && len(sch.PatternProperties) == 0
		full := false
		c.members(func(key string) bool {
			sub, named := sch.Properties[key]
			switch {
			case named:
				b.path = append(b.path, key)
				full = b.walkBytes(sub, c)
				b.path = b.path[:len(b.path)-1]
			case unknown:
				b.issues = append(b.issues, validate.Issue{Path: append(slices.Clone(b.path), key), Message: "Unknown key"})
				full = b.full()
				c.value()
			default:
				c.value()
			}
			return !full
		})
		return full
	case '[':
		if !applies(sch, "array") {
			c.value()
			return false
		}
		full := false
		i := -1
		c.elements(func() bool {
			i++
			sub := itemSchema(sch, i)
			if sub == nil {
				c.value()
				return true
			}
			b.path = append(b.path, strconv.Itoa(i))
			defer func() { b.path = b.path[:len(b.path)-1] }()
			mark, start := len(b.issues), c.i
			if full = b.walkBytes(sub, c); full {
				return false
			}
			b.issues = b.issues[:mark] // replaced by the element's whole issues
			e, err := validate.DecodeJSON(c.data[start:c.i])
			if err != nil {
				return true // not reached: the body passed CheckJSON
			}
			full = b.alone(sub, e)
			return !full
		})
		return full
	}
	c.value()
	return false
}

// scanner walks JSON text that validate.CheckJSON accepted (well formed)
// without decoding it.
type scanner struct {
	data []byte
	i    int
}

func (c *scanner) peek() byte {
	if c.i < len(c.data) {
		return c.data[c.i]
	}
	return 0
}

func (c *scanner) space() {
	for c.i < len(c.data) {
		switch c.data[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

// str skips the string at c.i and returns its raw text, quotes included,
// and whether it has an escape.
func (c *scanner) str() ([]byte, bool) {
	start, esc := c.i, false
	c.i++
	for c.i < len(c.data) {
		switch c.data[c.i] {
		case '\\':
			esc = true
			c.i += 2
			continue
		case '"':
			c.i++
			return c.data[start:c.i], esc
		}
		c.i++
	}
	return c.data[start:], esc
}

// value skips one value (and the space before it).
func (c *scanner) value() {
	c.space()
	switch c.peek() {
	case '"':
		c.str()
	case '{', '[':
		// locals, not c.i: this loop runs over most of an attack body
		d, depth := c.data, 0
		for i := c.i; i < len(d); i++ {
			switch d[i] {
			case '"':
				for i++; i < len(d) && d[i] != '"'; i++ {
					if d[i] == '\\' {
						i++
					}
				}
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					c.i = i + 1
					return
				}
			}
		}
		c.i = len(d)
	default: // number, true, false, null
		for c.i < len(c.data) {
			switch c.data[c.i] {
			case ',', ']', '}', ' ', '\t', '\n', '\r':
				return
			}
			c.i++
		}
	}
}

// members calls fn for each key of the object at c.i (decoded as
// validate.DecodeJSON decodes it), with c.i at its value, which fn must
// skip; it stops when fn returns false, else skips the closing brace.
func (c *scanner) members(fn func(key string) bool) {
	c.i++ // '{'
	for {
		c.space()
		if c.peek() != '"' {
			c.i++ // '}'
			return
		}
		raw, esc := c.str()
		key := string(raw[1 : len(raw)-1])
		if esc {
			k, err := validate.DecodeJSON(raw)
			if s, ok := k.(string); ok && err == nil {
				key = s
			}
		}
		c.space()
		c.i++ // ':'
		c.space()
		if !fn(key) {
			return
		}
		c.space()
		if c.peek() == ',' {
			c.i++
		}
	}
}

// elements calls fn for each element of the array at c.i, with c.i at
// the element, which fn must skip; it stops when fn returns false, else
// skips the closing bracket.
func (c *scanner) elements(fn func() bool) {
	c.i++ // '['
	for {
		c.space()
		if c.peek() == ']' || c.i >= len(c.data) {
			c.i++
			return
		}
		if !fn() {
			return
		}
		c.space()
		if c.peek() == ',' {
			c.i++
		}
	}
}
