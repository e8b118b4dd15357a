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

// What the caller sets on the route (Errors, Middleware, Doc) adds to its
// refusals before the upgrade, which stay in the document; a plain GET
// serving websocket.New documents the refusals too.
func TestRouteDeclarationsAddToTheRefusals(t *testing.T) {
	errRoomFull := fx.NewError(409, "APP_ROOM_FULL", "The room is full")
	errNoTicket := fx.NewError(401, "APP_NO_TICKET", "A ticket is required")
	ticket := fx.Declare(func(c *fx.Ctx, next fx.Next) error { return next() }, fx.Declaration{Errors: []*fx.Error{errNoTicket}})
	app := fx.New()
	r := websocket.Route("/rooms/:room", echo)
	r.Errors = []*fx.Error{errRoomFull}
	r.Middleware = []fx.Middleware{ticket}
	r.Doc = fx.RouteDoc{Summary: "Join a room", Tags: []string{"chat"}}
	app.Route(r)
	app.Get("/plain", websocket.New(echo))
	if err := app.Boot(); err != nil {
		t.Fatal(err)
	}
	doc, err := openapi.Generate(app, openapi.Config{})
	if err != nil {
		t.Fatal(err)
	}
	paths := doc["paths"].(map[string]any)
	op := paths["/rooms/{room}"].(map[string]any)["get"].(map[string]any)
	responses := op["responses"].(map[string]any)
	for _, status := range []string{"101", "400", "401", "403", "409", "426", "503"} {
		if _, ok := responses[status]; !ok {
			t.Errorf("/rooms/{room}: response %s not documented; have %v", status, keys(responses))
		}
	}
	if op["summary"] != "Join a room" {
		t.Errorf("summary %v; want the Doc set on the route", op["summary"])
	}
	plain := paths["/plain"].(map[string]any)["get"].(map[string]any)["responses"].(map[string]any)
	for _, status := range []string{"400", "403", "426", "503"} {
		if _, ok := plain[status]; !ok {
			t.Errorf("/plain: response %s not documented; have %v", status, keys(plain))
		}
	}
}
