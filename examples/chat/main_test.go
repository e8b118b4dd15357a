package main

import (
	"encoding/json"
	"testing"

	"github.com/fxhq/fx/fxtest"
)

func TestChat(t *testing.T) {
	c := fxtest.New(t, newApp())
	c.Get("/rooms/go?name=ada").Do().AssertError(426, "FX_UPGRADE_REQUIRED")
	c.Get("/rooms/go").WebSocket().AssertClose(4422, "APP_NAME_REQUIRED")

	ada := c.Get("/rooms/go?name=ada").WebSocket()
	expect(t, ada, Message{"go", "ada", "joined"})
	bob := c.Get("/rooms/go?name=bob").WebSocket()
	expect(t, bob, Message{"go", "bob", "joined"})
	expect(t, ada, Message{"go", "bob", "joined"})

	ada.Send(`{"text":"hello"}`)
	expect(t, ada, Message{"go", "ada", "hello"})
	expect(t, bob, Message{"go", "ada", "hello"})

	bob.Close(1000, "")
	bob.AssertClose(1000, "")
	expect(t, ada, Message{"go", "bob", "left"})
}

func expect(t *testing.T, ws *fxtest.WebSocket, want Message) {
	t.Helper()
	_, p := ws.Receive()
	var got Message
	if err := json.Unmarshal(p, &got); err != nil || got != want {
		t.Errorf("got %s; want %+v", p, want)
	}
}
