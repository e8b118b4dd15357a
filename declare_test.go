package fx_test

import (
	"slices"
	"testing"

	"github.com/fxhq/fx"
)

// TestDeclareAllAddsUp: a second declaration of one middleware adds to
// the first (lists appended, flags or-ed), Declare is Declare with
// errors only, and DeclarationOf returns copies.
func TestDeclareAllAddsUp(t *testing.T) {
	e1, e2 := fx.NewError(400, "E1", "a"), fx.NewError(409, "E2", "b")
	key := fx.SecuritySchemeDoc{Name: "partnerKey", Type: "apiKey", In: "header", Param: "X-Partner-Key"}
	region := fx.ParameterDoc{Name: "X-Region", In: "header", Required: true}
	var state int
	mw := fx.Middleware(func(c *fx.Ctx, next fx.Next) error { state++; return next() })
	if got := fx.Declare(mw, fx.Declaration{Errors: []*fx.Error{e1, nil}, Security: []fx.SecuritySchemeDoc{key}, Anonymous: true}); got == nil {
		t.Fatal("Declare returned nil")
	}
	fx.Declare(mw, fx.Declaration{Errors: []*fx.Error{e2}})
	fx.Declare(mw, fx.Declaration{Parameters: []fx.ParameterDoc{region}})
	d := fx.DeclarationOf(mw)
	if !slices.Equal(d.Errors, []*fx.Error{e1, e2}) || !slices.Equal(d.Security, []fx.SecuritySchemeDoc{key}) ||
		len(d.Parameters) != 1 || d.Parameters[0].Name != "X-Region" || !d.Anonymous || d.RequiresIdentity {
		t.Errorf("declaration %+v", d)
	}
	if !slices.Equal(fx.DeclarationOf(mw).Errors, []*fx.Error{e1, e2}) {
		t.Errorf("DeclarationOf(mw).Errors = %v", fx.DeclarationOf(mw).Errors)
	}
	d.Security[0].Name = "changed"
	if fx.DeclarationOf(mw).Security[0].Name != "partnerKey" {
		t.Error("DeclarationOf shares its slices")
	}
	if got := fx.DeclarationOf(func(c *fx.Ctx, next fx.Next) error { return next() }); got.Errors != nil || got.Security != nil || got.Anonymous {
		t.Errorf("undeclared: %+v", got)
	}
}
