package playground_test

import (
	"encoding/json"
	"testing"

	"github.com/fxhq/fx/validate"
	"github.com/fxhq/fx/validate/adapters/playground"
)

type described struct {
	Email string   `json:"email" validate:"required,email"`
	Name  string   `json:"name" validate:"min=2,max=20"`
	Age   int      `json:"age" validate:"gte=18,lt=130"`
	Role  string   `json:"role" validate:"oneof=admin user"`
	Tags  []string `json:"tags" validate:"max=3,dive,len=2"`
	Site  string   `json:"site" validate:"omitempty,url|uri"`
}

// TestPlaygroundJSONSchema: tags that map cleanly become keywords.
func TestPlaygroundJSONSchema(t *testing.T) {
	m, ok := validate.JSONSchemaOf(playground.Struct[described](nil))
	if !ok {
		t.Fatal("not a validate.Describer")
	}
	b, _ := json.Marshal(m)
	want := `{"properties":{"age":{"exclusiveMaximum":130,"format":"int64","maximum":9007199254740992,"minimum":18,"type":"integer"},` +
		`"email":{"format":"email","type":"string"},` +
		`"name":{"maxLength":20,"minLength":2,"type":"string"},` +
		`"role":{"enum":["admin","user"],"type":"string"},` +
		`"site":{"type":"string"},` +
		`"tags":{"items":{"maxLength":2,"minLength":2,"type":"string"},"maxItems":3,"type":"array"}},` +
		`"required":["email"],"type":"object"}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}
