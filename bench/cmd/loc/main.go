// Command loc counts the lines of code of the flagship service in each
// framework: examples/orders (fx: its service package; its main.go holds
// only the flag and the listener, which the peers' versions leave to
// cmd/server) beside bench's Huma and Fiber v3 versions, and prints a
// Markdown table. A line counts when it holds a Go token: blank lines and
// comments do not count, nor does a func main. Run it from bench/:
//
//	go run ./cmd/loc
//
// The peers' files share orders_flagship.go (the store and the errors),
// counted for each of them; the envelope glue they share with the
// benchmark service (humaNewError, fiberV3ErrorHandler, validator.go) is
// not counted, which flatters them.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"os"
	"path/filepath"
	"strings"
)

// impls are the versions compared, each as its files relative to bench/.
var impls = []struct {
	name  string
	files []string
}{
	{"fx", []string{"../examples/orders/service/service.go"}},
	{"Huma v2", []string{"orders_huma.go", "orders_flagship.go"}},
	{"Fiber v3", []string{"orders_fiber.go", "orders_flagship.go"}},
}

func main() {
	fmt.Println("| implementation | files | lines of code |")
	fmt.Println("|---|---|---:|")
	for _, im := range impls {
		total := 0
		for _, f := range im.files {
			n, err := count(f)
			if err != nil {
				fmt.Fprintln(os.Stderr, "loc:", err, "(run from bench/)")
				os.Exit(1)
			}
			total += n
		}
		fmt.Printf("| %s | %s | %d |\n", im.name, "`"+strings.Join(im.files, "`, `")+"`", total)
	}
}

// count returns the number of lines of path that hold a token, outside
// func main.
func count(path string) (int, error) {
	src, err := os.ReadFile(filepath.FromSlash(path))
	if err != nil {
		return 0, err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return 0, err
	}
	skipFrom, skipTo := -1, -1
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "main" {
			skipFrom, skipTo = fset.Position(fn.Pos()).Line, fset.Position(fn.End()).Line
		}
	}
	var s scanner.Scanner
	file := fset.AddFile(path, -1, len(src))
	s.Init(file, src, nil, 0) // comments are skipped
	lines := map[int]bool{}
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.SEMICOLON && lit == "\n" {
			continue // inserted at a line's end, not written
		}
		line := file.Line(pos)
		if line < skipFrom || line > skipTo {
			lines[line] = true
		}
	}
	return len(lines), nil
}
