package validate

import (
	"errors"
	"reflect"

	json "github.com/goccy/go-json"
)

// TypeDecoder is StructSchema.Decode for a type known only at run time
// (fx's typed operations find their Body field's type by reflection). It
// is built once per type and safe for concurrent use.
type TypeDecoder struct {
	d *tdesc
	t reflect.Type
}

// NewTypeDecoder returns the decoder of t (examined once, here).
func NewTypeDecoder(t reflect.Type) *TypeDecoder {
	return &TypeDecoder{d: describe(t), t: t}
}

// DecodeInto decodes body (one JSON value CheckJSON accepted) into dst, a
// pointer to a value of the decoder's type, as StructSchema.Decode does:
// when the body fits the type, go-json decodes it and issues is nil;
// otherwise issues lists every type mismatch found over the bytes,
// stopping at max (0: no limit), and dst is left partly written or
// untouched. A body that fits the types but that the decoder still
// refuses (a custom UnmarshalJSON) is the one issue "Has an invalid
// value". Cost: one scan of the bytes that does not allocate, plus
// go-json's decode.
func (td *TypeDecoder) DecodeInto(body []byte, dst any, max int) []Issue {
	var err error
	if typeFits(td.d, &cursor{data: body}) {
		if err = json.Unmarshal(body, dst); err == nil {
			return nil
		}
	}
	st := &state{max: max}
	streamType(td.d, &cursor{data: body}, st)
	if len(st.issues) > 0 {
		return st.issues
	}
	if err == nil {
		err = errors.New("validate: body refused by the decoder")
	}
	return []Issue{decodeIssue(err)}
}

// JSONSchema describes the type (see TypeJSONSchema).
func (td *TypeDecoder) JSONSchema() map[string]any { return typeSchema(td.d, map[*tdesc]bool{}) }
