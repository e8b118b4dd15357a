// Package brotli links the brotli encoder into fx's response compression.
// Import it for its side effect, once, anywhere in the program:
//
//	import _ "github.com/fxhq/fx/compression/brotli"
//
// Config.Compression then offers "br": it is part of the default
// Encodings (zstd, br, gzip: those linked, in that order), and an
// Encodings list may name it; without this import a list naming "br"
// fails Boot with a configuration error that names this package.
//
// Cost: about 1.8 MB of binary (the encoder's code and its static
// dictionary, fasthttp's use of go-brrr), which is why the core does not
// link it on its own; per response, CompressionConfig's table (brotli 4
// costs somewhat more than gzip 6 for a slightly smaller body).
package brotli

import (
	"github.com/fxhq/fx/internal/codecs"
	"github.com/valyala/fasthttp"
)

func init() { codecs.Brotli = fasthttp.AppendBrotliBytesLevel }
