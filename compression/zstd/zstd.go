// Package zstd links the zstd encoder into fx's response compression.
// Import it for its side effect, once, anywhere in the program:
//
//	import _ "github.com/fxhq/fx/compression/zstd"
//
// Config.Compression then offers "zstd": it is first in the default
// Encodings (zstd, br, gzip: those linked, in that order), and an
// Encodings list may name it; without this import a list naming "zstd"
// fails Boot with a configuration error that names this package.
//
// Cost: about 0.4 MB of binary (klauspost/compress's zstd encoder, through
// fasthttp), which is why the core does not link it on its own; per
// response, CompressionConfig's table (zstd 2 is the cheapest of the
// three codings for about brotli 4's size).
package zstd

import (
	"github.com/fxhq/fx/internal/codecs"
	"github.com/valyala/fasthttp"
)

func init() { codecs.Zstd = fasthttp.AppendZstdBytesLevel }
