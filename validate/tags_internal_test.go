package validate

import (
	"go/ast"
	goparser "go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestTagsReadInTagsGo: every struct tag the package honours (json,
// validate, pattern, doc, example, additionalProperties) is read in
// tags.go, and only there are a struct's fields walked (NumField): a
// reviewer finds the one reading of each tag there, and a stage that
// needs a tag reads it from fieldsOf's members or tagsOf.
func TestTagsReadInTagsGo(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "tags.go" {
			continue
		}
		f, err := goparser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			tag, ok := sel.X.(*ast.SelectorExpr)
			if sel.Sel.Name == "NumField" || (ok && tag.Sel.Name == "Tag" && (sel.Sel.Name == "Get" || sel.Sel.Name == "Lookup")) {
				t.Errorf("%s: %s reads a struct's fields or tags outside tags.go", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
}
