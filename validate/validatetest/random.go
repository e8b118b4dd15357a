package validatetest

// RandomInputs calls each n times with size bytes drawn from a fixed
// pseudo-random sequence that starts at seed: the same inputs on every
// run, so a failure found this way reproduces without a corpus. It is the
// input loop of the randomized differential tests (a body or a tree
// built from the bytes, checked at several limits).
//
// data is reused between calls: each must not keep it. Cost: one buffer
// of size bytes and a multiply-add a byte (a linear congruential
// generator, the one of Numerical Recipes), no allocation per call.
func RandomInputs(seed uint32, size, n int, each func(data []byte)) {
	state := seed
	data := make([]byte, size)
	for range n {
		for i := range data {
			state = state*1664525 + 1013904223
			data[i] = byte(state >> 24)
		}
		each(data)
	}
}
