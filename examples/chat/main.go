// Command chat is a chat server on fx's WebSocket routes: rooms, a
// broadcast to every member, and the error contract on both sides of the
// upgrade. See docs/websocket.md.
//
//	go run ./examples/chat
//	# open http://localhost:8080/ in two browser tabs, or:
//	curl -i localhost:8080/rooms/go            # 426 FX_UPGRADE_REQUIRED
//	curl -i localhost:8080/rooms/go?name=      # 426 too: not a handshake
package main

import (
	"log"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/websocket"
)

// Message is what members send and receive, as JSON.
type Message struct {
	Room string `json:"room"`
	From string `json:"from"`
	Text string `json:"text"`
}

// errName refuses a member without a usable name: the connection closes
// with 4422 and the code as the reason.
var errName = fx.NewError(422, "APP_NAME_REQUIRED", "Give a name of 1 to 32 characters: ?name=ada")

// hub holds the members of every room.
type hub struct {
	mu    sync.Mutex
	rooms map[string]map[*websocket.Conn]string
}

func newHub() *hub { return &hub{rooms: map[string]map[*websocket.Conn]string{}} }

func (h *hub) join(room, name string, c *websocket.Conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.rooms[room] == nil {
		h.rooms[room] = map[*websocket.Conn]string{}
	}
	h.rooms[room][c] = name
}

func (h *hub) leave(room string, c *websocket.Conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.rooms[room], c)
	if len(h.rooms[room]) == 0 {
		delete(h.rooms, room)
	}
}

// broadcast sends m to every member of its room. WriteMessage only
// queues: a member that stopped reading is dropped by its own connection
// and never slows the others down.
func (h *hub) broadcast(m Message) {
	h.mu.Lock()
	members := make([]*websocket.Conn, 0, len(h.rooms[m.Room]))
	for c := range h.rooms[m.Room] {
		members = append(members, c)
	}
	h.mu.Unlock()
	for _, c := range members {
		_ = c.WriteJSON(m)
	}
}

// chat is the handler of /rooms/:room.
func (h *hub) chat(c *websocket.Conn) error {
	room := c.Ctx().Param("room")
	name := strings.TrimSpace(c.Ctx().Query("name"))
	if name == "" || utf8.RuneCountInString(name) > 32 {
		return errName
	}
	h.join(room, name, c)
	defer h.leave(room, c)
	h.broadcast(Message{Room: room, From: name, Text: "joined"})
	defer h.broadcast(Message{Room: room, From: name, Text: "left"})
	for {
		var in struct {
			Text string `json:"text"`
		}
		if err := c.ReadJSON(&in); err != nil {
			return nil // the member left (its close is answered) or sent garbage
		}
		h.broadcast(Message{Room: room, From: name, Text: in.Text})
	}
}

// newApp builds the chat service.
func newApp() *fx.App {
	app := fx.New()
	h := newHub()
	app.Route(websocket.Route("/rooms/:room", h.chat))
	app.Get("/", func(c *fx.Ctx) error {
		c.RequestCtx().SetContentType("text/html; charset=utf-8")
		c.RequestCtx().SetBodyString(page)
		return nil
	})
	return app
}

func main() {
	log.Fatal(newApp().Listen(":8080"))
}

// page is a minimal browser client.
const page = `<!doctype html>
<meta charset="utf-8"><title>fx chat</title>
<input id="name" placeholder="name"> <input id="room" value="go"> <button id="join">join</button>
<pre id="log"></pre>
<input id="text" size="60"> <button id="send">send</button>
<script>
let ws;
const log = (s) => { document.getElementById("log").textContent += s + "\n"; };
document.getElementById("join").onclick = () => {
  const name = encodeURIComponent(document.getElementById("name").value);
  const room = encodeURIComponent(document.getElementById("room").value);
  ws = new WebSocket("ws://" + location.host + "/rooms/" + room + "?name=" + name);
  ws.onmessage = (e) => { const m = JSON.parse(e.data); log(m.from + ": " + m.text); };
  ws.onclose = (e) => log("closed " + e.code + " " + e.reason);
};
document.getElementById("send").onclick = () => {
  ws.send(JSON.stringify({text: document.getElementById("text").value}));
};
</script>
`
