package validatetest

import "bytes"

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
