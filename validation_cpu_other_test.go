//go:build !unix

package fx_test

// processCPU is not measured here: the cpu-ms/op metric reads 0.
func processCPU() int64 { return 0 }
