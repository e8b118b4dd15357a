package validatetest

import (
	"bytes"
	"strconv"

	"github.com/fxhq/fx/validate"
)

// HugeBody returns the attack body of the bounded-validation tests and
// benchmarks: {"<name>":"","items":[item,item,...]}, with as many items
// as fit in size bytes (4 << 20, fx's default body limit: 1.4 million
// empty objects). A schema that requires a non-empty name and fields in
// each item has an issue per item; a bounded validation must stop at its
// limit instead of walking them all. Cost: one buffer of size bytes.
func HugeBody(name, item string, size int) []byte {
	var b bytes.Buffer
	b.Grow(size)
	b.WriteString(`{"` + name + `":"","items":[` + item)
	for b.Len() < size-4 {
		b.WriteString(`,` + item)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// ManyKeysBody returns the object of members (JSON text such as
// `"name":"x"`, or "") followed by n unknown keys, "k0":0 to "k<n-1>":0:
// the body whose duplicate-key check is costly (a set of n key hashes:
// 8 MB for 330,000 keys) and that a schema ignoring unknown keys accepts.
func ManyKeysBody(members string, n int) []byte {
	var b bytes.Buffer
	b.WriteString("{" + members)
	for i := range n {
		if i > 0 || members != "" {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":0`)
	}
	b.WriteString("}")
	return b.Bytes()
}

// HugeSchema returns the schema the bounded-validation tests attack with
// HugeBody("customer", "{}", size): the order contract of the
// examples/validation service, a customer of 1 to 100 characters and at
// least one item, each a sku like "A-1" and a qty from 1 to 99, no other
// key. Every empty item of that body has two issues (sku and qty
// required). Each call builds a new schema.
func HugeSchema() *validate.ObjectSchema {
	return validate.Object(validate.Fields{
		"customer": validate.String().MinLen(1).MaxLen(100),
		"items": validate.Array(validate.Object(validate.Fields{
			"sku": validate.String().Pattern(`^[A-Z]-\d+$`, "Must look like A-1"),
			"qty": validate.Integer().Min(1).Max(99),
		})).MinItems(1),
	}).Strict()
}
