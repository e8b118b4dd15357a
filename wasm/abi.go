package wasm

import (
	"encoding/binary"

	"github.com/valyala/fasthttp"

	"github.com/fxhq/fx"
)

// The ABI between host and guest, version 1. ABI.md (beside this file) is
// the normative description; these names are what a guest exports.
const (
	// ABIVersion is the version of the ABI this package speaks. A guest's
	// fx_abi_version export must return it.
	ABIVersion = 1

	// ExportMemory is the guest's exported linear memory.
	ExportMemory = "memory"
	// ExportInitialize is the optional reactor initialiser, called once per
	// instance before anything else (Go's -buildmode=c-shared emits it).
	ExportInitialize = "_initialize"
	// ExportABIVersion is func() i32, returning ABIVersion.
	ExportABIVersion = "fx_abi_version"
	// ExportAlloc is func(size i32) i32: a pointer to size writable bytes
	// that stay reserved for the host until the next fx_alloc call.
	ExportAlloc = "fx_alloc"
	// ExportHandle is func(ptr, len i32) i64: handle the request encoded at
	// ptr, return the response location as ptr<<32 | len.
	ExportHandle = "fx_handle"
)

// requestPreamble is the fixed part of an encoded request: six u32 counts.
const requestPreamble = 6 * 4

// requestSize returns the encoded size of the request and its header and
// parameter counts. It walks the same sources as encodeRequest, in the same
// order.
func requestSize(c *fx.Ctx, rc *fasthttp.RequestCtx) (size, headers, params int) {
	size = requestPreamble + len(rc.Method()) + len(rc.Path()) + len(rc.URI().QueryString()) + len(rc.Request.Body())
	for k, v := range rc.Request.Header.All() {
		size += 8 + len(k) + len(v)
		headers++
	}
	for k, v := range c.Params {
		size += 8 + len(k) + len(v)
		params++
	}
	return size, headers, params
}

// encodeRequest appends the ABI encoding of the request to dst:
//
//	u32 method_len, u32 path_len, u32 query_len, u32 header_count,
//	u32 param_count, u32 body_len,
//	method, path, query,
//	header_count × (u32 name_len, u32 value_len, name, value),
//	param_count  × (u32 name_len, u32 value_len, name, value),
//	body
//
// All integers are little-endian. The body is the last body_len bytes.
func encodeRequest(dst []byte, c *fx.Ctx, rc *fasthttp.RequestCtx, headers, params int) []byte {
	method, path, query, body := rc.Method(), rc.Path(), rc.URI().QueryString(), rc.Request.Body()
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(method)))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(path)))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(query)))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(headers))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(params))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(body)))
	dst = append(dst, method...)
	dst = append(dst, path...)
	dst = append(dst, query...)
	for k, v := range rc.Request.Header.All() {
		dst = appendPair(dst, k, v)
	}
	for k, v := range c.Params {
		dst = appendPair(dst, k, v)
	}
	return append(dst, body...)
}

func appendPair[T string | []byte](dst []byte, k, v T) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(k)))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(v)))
	dst = append(dst, k...)
	return append(dst, v...)
}
