//line docs/websocket.md:9
package main

import (
	"log"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/websocket"
)

func main() {
	app := fx.New()
	app.Get("/echo", websocket.New(func(c *websocket.Conn) error {
		for {
			t, msg, err := c.ReadMessage()
			if err != nil {
				return nil // the peer left; its close was answered
			}
			if err := c.WriteMessage(t, msg); err != nil {
				return nil
			}
		}
	}))
	log.Fatal(app.Listen(":8080"))
}
