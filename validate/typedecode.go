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
	d    *tdesc
	t    reflect.Type
	plan *vplan
	dec  *dnode // the one-pass decoding plan (decode.go)
}

// NewTypeDecoder returns the decoder of t (examined once, here); it
// panics when t's constraint tags cannot be honoured (see CompileType).
func NewTypeDecoder(t reflect.Type) *TypeDecoder { return must(CompileType(t)) }

// CompileType returns the decoder of t, or the *TagError of each
// constraint tag of t that cannot be honoured (joined with errors.Join).
func CompileType(t reflect.Type) (*TypeDecoder, error) {
	plan, err := planOf(t)
	if err != nil {
		return nil, err
	}
	return &TypeDecoder{d: describe(t), t: t, plan: plan, dec: dplanOf(t)}, nil
}

// Decode reads body once into dst, a pointer to a zero value of the
// decoder's type: it checks the strict grammar (CheckJSON's verdict:
// err is exactly CheckJSON(body)), decodes every value into its field
// and then runs the constraint tags over dst. issues is what DecodeInto
// reports for the same body (nil when the value passes), at most max of
// them (0: no limit). On a body that does not fit the type (or that the
// walk leaves to go-json, see decode.go), dst is reset and the body is
// read again to word every issue. Strings written into dst never alias
// body: a caller may keep them. Cost on a body that fits: one pass, one
// allocation for all the strings of a body of at most 4 KiB, one per
// slice (more when it holds over 4 elements: it doubles) and per pointer,
// and the constraint plan (no allocation on a value that passes it).
func (td *TypeDecoder) Decode(body []byte, dst any, max int) (issues []Issue, err error) {
	v := reflect.ValueOf(dst)
	at := v.UnsafePointer()
	if td.dec.decodeInto(body, at) {
		return td.plan.run(at, nil, max, nil), nil
	}
	v.Elem().SetZero()
	if err := CheckJSON(body); err != nil {
		return nil, err
	}
	return td.DecodeInto(body, dst, max), nil
}

// CheckJSON is the package's CheckJSON and DecodeInto's type scan in one
// pass over body: err is exactly CheckJSON(body), and fits (when err is
// nil) reports whether the body fits the decoder's type, so that
// DecodeFitting can skip the scan. Cost: one pass over a body that fits
// (no allocation, CheckJSON's exceptions and a time or base64 string
// aside); a body that does not fit is read by CheckJSON once more.
func (td *TypeDecoder) CheckJSON(body []byte) (fits bool, err error) {
	return checkFits(td.d, body)
}

// DecodeInto decodes body (one JSON value CheckJSON accepted) into dst, a
// pointer to a value of the decoder's type, as StructSchema.Decode does:
// when the body fits the type, go-json decodes it and the constraint tags
// are checked over dst (issues is nil when they pass); otherwise issues
// lists every type mismatch found over the bytes, stopping at max (0: no
// limit), followed, when there is room, by the constraint issues of the
// fields that type-checked, and dst is left partly written or untouched.
// A body that fits the types but that the decoder still refuses (a
// custom UnmarshalJSON) is the one issue "Has an invalid value". Cost:
// one scan of the bytes that does not allocate, go-json's decode, and the
// constraint plan (no allocation on a value that passes it).
func (td *TypeDecoder) DecodeInto(body []byte, dst any, max int) []Issue {
	return td.decode(body, dst, max, typeFits(td.d, newCursor(body)))
}

// DecodeFitting is DecodeInto for a body the decoder's CheckJSON found
// fitting: it skips the scan of the bytes (go-json's decode and the
// constraint plan only).
func (td *TypeDecoder) DecodeFitting(body []byte, dst any, max int) []Issue {
	return td.decode(body, dst, max, true)
}

func (td *TypeDecoder) decode(body []byte, dst any, max int, fits bool) []Issue {
	var err error
	if fits {
		if err = json.Unmarshal(body, dst); err == nil {
			return td.plan.run(reflect.ValueOf(dst).UnsafePointer(), nil, max, nil)
		}
	}
	st := &state{max: max}
	streamType(td.d, newCursor(body), st)
	if len(st.issues) > 0 {
		return lenientRules(td.d, td.plan, td.t, false, treeOf(body, td.plan, st.issues, max), st.issues, max)
	}
	if err == nil {
		err = errors.New("validate: body refused by the decoder")
	}
	return []Issue{decodeIssue(err)}
}

// JSONSchema describes the type as a request body (StructSchema.JSONSchema's
// reading: slices and maps nullable only when a pointer or omitempty says
// so).
func (td *TypeDecoder) JSONSchema() map[string]any { return requestSchema(td.d) }
