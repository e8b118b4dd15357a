package jsonschema

import (
	"slices"
	"strconv"

	"github.com/fxhq/fx/internal/jsonscan"
	"github.com/fxhq/fx/validate"
	js "github.com/santhosh-tekuri/jsonschema/v6"
)

// ValidateJSON is Validate(validate.DecodeJSON(body)) (validate.Decoder):
// fx hands the body bytes to the schema instead of building the generic
// tree first, so that ValidateJSONLimit can stop before building it.
func (s *Schema) ValidateJSON(body []byte) validate.Result { return s.ValidateJSONLimit(body, 0) }

// ValidateJSONLimit is ValidateJSON with at most max issues
// (validate.LimitedDecoder). On a body of more than 16·max bytes a
// pre-pass runs over the bytes: array elements are decoded
// (validate.DecodeJSON, as for the whole body) and validated one at a
// time, unknown keys are counted without decoding, and the pre-pass
// stops at max; only when it found fewer is the body decoded whole and
// validated as Validate does. Measured (BenchmarkHugeInvalidBodyBytes):
// the 4 MiB body of empty items never becomes a tree (before: fx decoded
// it into 1.4 million maps, 1.7 s and 210 MB, before the library ran).
func (s *Schema) ValidateJSONLimit(body []byte, max int) validate.Result {
	if max > 0 && s.safe && len(body) > smallBody*max {
		// The pre-pass scans bytes of a well-formed body only: it checks
		// the grammar first; otherwise DecodeJSON checks it.
		if err := validate.CheckJSON(body); err != nil {
			return refused(err)
		}
		b := &pass{max: max, path: make([]string, 0, 8)}
		c := &jsonscan.Cursor{Data: body}
		if b.walkBytes(s.s, c) {
			return validate.Result{Issues: b.issues[:max:max]}
		}
	}
	tree, err := validate.DecodeJSON(body)
	if err != nil {
		return refused(err)
	}
	return s.whole(tree, max)
}

// ChecksGrammar reports true (validate.GrammarChecker): ValidateJSON
// checks the grammar of every body itself, in DecodeJSON or, on a large
// body, before the bounded pre-pass, so fx does not check it again.
func (s *Schema) ChecksGrammar() bool { return true }

// refused is the Result of a body the grammar rejects (err, a
// *validate.JSONError): its one issue, as fx words it.
func refused(err error) validate.Result {
	return validate.Result{Issues: []validate.Issue{err.(*validate.JSONError).Issue()}}
}

// smallBody: a body of at most smallBody·max bytes skips the pre-pass.
var smallBody = 16

// walkBytes is walk over the JSON text of one value at c.Pos (which it
// skips); it decodes only the array elements it validates and the keys.
func (b *pass) walkBytes(sch *js.Schema, c *jsonscan.Cursor) bool {
	c.SkipSpace()
	switch c.Peek() {
	case '{':
		if !applies(sch, "object") {
			c.SkipValue()
			return false
		}
		ap, isBool := sch.AdditionalProperties.(bool)
		unknown := isBool && !ap && len(sch.PatternProperties) == 0
		full := false
		c.Members(func(raw []byte, esc bool) bool {
			key := string(raw[1 : len(raw)-1])
			if esc { // decoded as validate.DecodeJSON decodes it
				k, err := validate.DecodeJSON(raw)
				if s, ok := k.(string); ok && err == nil {
					key = s
				}
			}
			sub, named := sch.Properties[key]
			switch {
			case named:
				b.path = append(b.path, key)
				full = b.walkBytes(sub, c)
				b.path = b.path[:len(b.path)-1]
			case unknown:
				b.issues = append(b.issues, validate.Issue{Path: append(slices.Clone(b.path), key), Message: "Unknown key"})
				full = b.full()
				c.SkipValue()
			default:
				c.SkipValue()
			}
			return !full
		})
		return full
	case '[':
		if !applies(sch, "array") {
			c.SkipValue()
			return false
		}
		full := false
		i := -1
		c.Elements(func() bool {
			i++
			sub := itemSchema(sch, i)
			if sub == nil {
				c.SkipValue()
				return true
			}
			b.path = append(b.path, strconv.Itoa(i))
			defer func() { b.path = b.path[:len(b.path)-1] }()
			mark, start := len(b.issues), c.Pos
			if full = b.walkBytes(sub, c); full {
				return false
			}
			b.issues = b.issues[:mark] // replaced by the element's whole issues
			e, err := validate.DecodeJSON(c.Data[start:c.Pos])
			if err != nil {
				return true // not reached: the body passed CheckJSON
			}
			full = b.alone(sub, e)
			return !full
		})
		return full
	}
	c.SkipValue()
	return false
}
