// Command golden writes an OpenAPI document (or any JSON value) read from
// standard input in its golden form on standard output: object keys
// sorted, indented by two spaces, one value per line, strings and numbers
// exactly as written (numbers are never re-formatted through float64, and
// <, > and & stay as they are). The documents the examples serve are
// committed in this form under testdata/, so that a change to a contract
// reads as a diff of the lines it changes; check.sh writes them.
//
//	go run ./cmd/golden < served.json > testdata/NAME.json
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

func main() {
	if err := golden(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "golden:", err)
		os.Exit(1)
	}
}

// golden decodes one JSON value from r and writes its golden form to w.
// Trailing data after the value is an error.
func golden(r io.Reader, w io.Writer) error {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("trailing data after the JSON value")
	}
	out := bufio.NewWriter(w)
	enc := json.NewEncoder(out) // maps encode with sorted keys
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	return out.Flush()
}
