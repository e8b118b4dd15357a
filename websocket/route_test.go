package websocket_test

import (
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/openapi"
	"github.com/fxhq/fx/websocket"
)

// The route appears in the OpenAPI document as the GET it is: its 101 and
// the envelopes it can answer before the upgrade.
func TestRouteIsDocumented(t *testing.T) {
	app := fx.New()
	app.Route(websocket.Route("/chat/:room", echo))
	if err := app.Boot(); err != nil {
		t.Fatal(err)
	}
	doc, err := openapi.Generate(app, openapi.Config{})
	if err != nil {
		t.Fatal(err)
	}
	paths := doc["paths"].(map[string]any)
	op, ok := paths["/chat/{room}"].(map[string]any)["get"].(map[string]any)
	if !ok {
		t.Fatalf("no GET /chat/{room} in %v", paths)
	}
	responses := op["responses"].(map[string]any)
	for _, status := range []string{"101", "400", "403", "426", "503"} {
		if _, ok := responses[status]; !ok {
			t.Errorf("response %s not documented; have %v", status, keys(responses))
		}
	}
	if _, ok := responses["200"]; ok {
		t.Error("a 200 is documented; a WebSocket route never answers one")
	}
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
