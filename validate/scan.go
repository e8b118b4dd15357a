package validate

import "github.com/fxhq/fx/internal/jsonscan"

// JSONScanner walks the JSON text of a body without decoding it: the
// adapters' bounded pre-passes use it to stop at the issue limit before a
// huge body becomes a tree. It is fx's one JSON scanner (the same type
// the strict reader, the schemas' byte path and the WASM response parser
// use), so a fix to how it skips strings or nesting lands everywhere at
// once.
//
// Contract: Data must already have passed CheckJSON (well formed). The
// scanner does not validate: on other input no method panics or reads
// outside Data, but what it skips and returns is unspecified and Pos may
// end past len(Data). Pos is the offset of the next byte to read; set it
// to start elsewhere, read it to slice the raw text of what a method
// skipped (Data[start:Pos]).
//
// Methods: Peek (the byte at Pos, 0 at the end), SkipSpace, SkipString
// (the raw text with both quotes, and whether it has an escape),
// SkipValue (white space, then one whole value), Members (each member of
// the object at Pos: fn gets the key's raw text and Pos at its value,
// which fn must skip; false stops) and Elements (each element of the
// array at Pos, likewise).
//
// Cost: no method allocates; each reads every byte it skips once. Every
// slice it returns aliases Data (for a request body: valid only as long
// as the body is).
type JSONScanner = jsonscan.Cursor

// MoreNodesThan reports whether the decoded JSON tree v (values as
// DecodeJSON produces them: map[string]any, []any and scalars) has more
// than n nodes, counting each value once. It stops counting at n+1, so its
// cost is bounded by n whatever the size of v, and it allocates nothing.
// Adapters use it to decide whether a value is large enough for their
// bounded pre-pass.
func MoreNodesThan(v any, n int) bool {
	var count func(v any) bool
	count = func(v any) bool {
		if n--; n < 0 {
			return true
		}
		switch x := v.(type) {
		case map[string]any:
			for _, e := range x {
				if count(e) {
					return true
				}
			}
		case []any:
			for _, e := range x {
				if count(e) {
					return true
				}
			}
		}
		return false
	}
	return count(v)
}
