package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestGolden checks the golden form: keys sorted at every depth, two-space
// indentation, numbers and HTML characters as written, and trailing data
// refused.
func TestGolden(t *testing.T) {
	in := `{"b":{"y":1,"x":[9007199254740993,1e400,"<a&b>"]},"a":null}`
	want := `{
  "a": null,
  "b": {
    "x": [
      9007199254740993,
      1e400,
      "<a&b>"
    ],
    "y": 1
  }
}
`
	var out bytes.Buffer
	if err := golden(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Errorf("golden form:\n%s\nwant\n%s", out.String(), want)
	}
	if err := golden(strings.NewReader(`{} {}`), &out); err == nil {
		t.Error("trailing data was accepted")
	}
}
