// Package codecs holds the encoders of the content codings the core's
// response compression (Config.Compression) offers beyond gzip: zstd and
// brotli. They are nil unless the program imports
// github.com/fxhq/fx/compression/zstd or github.com/fxhq/fx/compression/brotli,
// whose init sets them; a program that imports neither does not link
// their encoders (fasthttp's, about 0.4 MB for zstd and 1.8 MB for
// brotli's tables and code in a hello-world binary), because nothing
// reachable from it refers to them.
//
// They are set only during package initialisation, before main runs, and
// only read afterwards: no lock is needed.
package codecs

// Encoder appends src compressed at level (in the coding's own scale) to
// dst and returns the result; an empty result means the work was refused
// (fasthttp's worker pool does under extreme load) and the body is sent
// as it is.
type Encoder func(dst, src []byte, level int) []byte

// Zstd and Brotli are the linked encoders, nil when their package is not
// imported.
var Zstd, Brotli Encoder
