//go:build wasip1

package guest

import "unsafe"

// The ABI exports. The request buffer and the last response are kept in
// package variables so the garbage collector never frees memory the host
// is about to read or write.
var (
	reqBuf  []byte
	respBuf []byte
)

//go:wasmexport fx_abi_version
//lint:ignore U1000 called by the host through go:wasmexport
func fxABIVersion() uint32 { return ABIVersion }

//go:wasmexport fx_alloc
//lint:ignore U1000 called by the host through go:wasmexport
func fxAlloc(size uint32) uint32 {
	if size == 0 {
		size = 1
	}
	if cap(reqBuf) < int(size) {
		reqBuf = make([]byte, size)
	}
	reqBuf = reqBuf[:cap(reqBuf)]
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(reqBuf))))
}

//go:wasmexport fx_handle
//lint:ignore U1000 called by the host through go:wasmexport
func fxHandle(ptr, n uint32) uint64 {
	if len(reqBuf) == 0 || ptr != uint32(uintptr(unsafe.Pointer(unsafe.SliceData(reqBuf)))) || int(n) > len(reqBuf) {
		panic("fx guest: fx_handle called with a buffer fx_alloc did not return")
	}
	req, err := DecodeRequest(reqBuf[:n])
	if err != nil {
		panic("fx guest: " + err.Error())
	}
	if handler == nil {
		panic("fx guest: no handler registered; call guest.Handle from an init function")
	}
	respBuf = AppendResponse(respBuf[:0], handler(req))
	if len(respBuf) == 0 {
		return 0
	}
	return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(respBuf))))<<32 | uint64(len(respBuf))
}
