//go:build !unix

package fx_test

// bdCPU is not measured here: the cpu-ms/op metric reads 0.
func bdCPU() int64 { return 0 }
