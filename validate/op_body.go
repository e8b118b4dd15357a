package validate

import (
	"reflect"
	"unsafe"

	"github.com/fxhq/fx/internal/tagengine"
)

// typeDecoder is StructSchema.Decode for a type known only at run time
// (fx's typed operations find their Body field's type by reflection):
// internal/tagengine's Body, registered below. It is built once per type and
// safe for concurrent use.
type typeDecoder struct {
	d    *tdesc
	t    reflect.Type
	plan *vplan
	dec  *dnode // the one-pass decoding plan (plan_decode.go)
}

func init() {
	tagengine.Register(&tagengine.Compilers[Issue]{
		Body: func(t reflect.Type) (tagengine.Body[Issue], error) {
			td, err := compileType(t)
			if err != nil {
				return nil, err
			}
			return td, nil
		},
		Field: func(owner reflect.Type, f reflect.StructField) (tagengine.Field[Issue], error) {
			r, err := compileField(owner, f)
			if err != nil {
				return nil, err
			}
			return r, nil
		},
		Param: func(t reflect.Type) (tagengine.Param, error) {
			p, err := paramOf(t)
			if err != nil {
				return nil, err
			}
			return p, nil
		},
	})
}

// compileType returns the decoder of t, or the *TagError of each
// constraint tag of t that cannot be honoured (joined with errors.Join).
func compileType(t reflect.Type) (*typeDecoder, error) {
	plan, err := planOf(t)
	if err != nil {
		return nil, err
	}
	return &typeDecoder{d: descOf(t), t: t, plan: plan, dec: dplanOf(t)}, nil
}

// Decode reads body once into dst, a pointer to a zero value of the
// decoder's type: it checks the strict grammar (err is exactly
// CheckJSON(body)), decodes every value into its field and then runs the
// constraint tags over dst (issues is nil when they pass). When the body
// does not fit the type, issues lists every type mismatch found over the
// bytes, stopping at max (0: no limit), followed, when there is room, by
// the constraint issues of the fields that type-checked; dst is then
// left partly written. A body that fits the types but holds a value the
// decoder refuses (an integer written 2.0 or 1e2, a custom UnmarshalJSON
// returning an error) is the one issue "Has an invalid value".
//
// Strings written into dst never alias body: a caller may keep them.
// Cost on a body that fits: one pass (decode.go), one allocation for all
// the strings of a body of at most 4 KiB, one per slice (more when it
// holds over 4 elements: it doubles) and per pointer, and the constraint
// plan (no allocation on a value that passes it). A body the pass stops
// on is read again only to word its issues: CheckJSON, then the type
// scan of the bytes; it is never decoded a second time.
func (td *typeDecoder) Decode(body []byte, dst any, max int) (issues []Issue, err error) {
	return td.DecodeAt(body, reflect.ValueOf(dst).UnsafePointer(), nil, max)
}

// DecodeAt is Decode into the value at at, a zero value of the
// decoder's type, writing the strings into room (its capacity; nil
// offers none) while they fit there, and only the rest into a buffer of
// their own: internal/tagengine's Body, for fx.Op, which has the address
// of its Body field and no interface holding it (making one, and
// reading it back, is a look-up of the field's pointer type), and room
// allocated with its input struct.
func (td *typeDecoder) DecodeAt(body []byte, at unsafe.Pointer, room []byte, max int) (issues []Issue, err error) {
	_, stop := td.dec.pass(body, at, room, false)
	if stop == nil {
		return td.plan.run(at, nil, max, nil), nil
	}
	reflect.NewAt(td.t, at).Elem().SetZero()
	issues, _, err = stopped(td, body, max, stop)
	return issues, err
}

// JSONSchema describes the type as a request body (StructSchema.JSONSchema's
// reading: slices and maps nullable only when a pointer or omitempty says
// so).
func (td *typeDecoder) JSONSchema() map[string]any { return requestSchema(td.d) }
