package fx_test

import (
	"go/ast"
	"go/build"
	"go/doc"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxRootExports is the most exported names package fx may have, counted
// by rootExports. A new export has to earn its place: one name per thing
// (a second name for what another already does is removed, not added),
// and plumbing only the repository's own packages use lives in internal/.
const maxRootExports = 160

// rootExports lists what package fx exports, as go doc shows it: every
// exported constant and variable (each name of a group counts), function,
// type, and method of an exported type (methods promoted from an
// unexported embedded type included, as go doc lists them under the type:
// App.Get and Group.Get are two). Struct fields and interface methods are
// not counted. It reads the non-test files the build of this platform
// compiles.
func rootExports(t *testing.T) []string {
	t.Helper()
	bp, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(bp.Dir, name), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/fxhq/fx")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	values := func(kind string, vs []*doc.Value) {
		for _, v := range vs {
			for _, n := range v.Names {
				if ast.IsExported(n) {
					names = append(names, kind+" "+n)
				}
			}
		}
	}
	values("const", p.Consts)
	values("var", p.Vars)
	for _, f := range p.Funcs {
		names = append(names, "func "+f.Name)
	}
	for _, typ := range p.Types {
		names = append(names, "type "+typ.Name)
		values("const", typ.Consts)
		values("var", typ.Vars)
		for _, f := range typ.Funcs {
			names = append(names, "func "+f.Name)
		}
		for _, m := range typ.Methods {
			names = append(names, "method "+typ.Name+"."+m.Name)
		}
	}
	slices.Sort(names)
	return names
}

// TestRootExportsWithinBudget holds package fx to maxRootExports exported
// names (`go test -run TestRootExportsWithinBudget -v` prints the count).
func TestRootExportsWithinBudget(t *testing.T) {
	names := rootExports(t)
	// The counter sees what go doc shows: a pinned function, a method
	// promoted from the embedded route methods, a grouped constant.
	for _, want := range []string{"func New", "method App.Get", "method Group.Get", "var ErrorCodes", "const SameSiteLax", "type Ctx"} {
		if !slices.Contains(names, want) {
			t.Fatalf("rootExports misses %q: %v", want, names)
		}
	}
	t.Logf("package fx exports %d names (at most %d)", len(names), maxRootExports)
	if len(names) > maxRootExports {
		t.Errorf("package fx exports %d names, more than %d:\n%s", len(names), maxRootExports, strings.Join(names, "\n"))
	}
}
