package fx_test

import (
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
)

// benchHandler runs h as the GET / route, with the header pairs hdr, on
// a reused RequestCtx; it must answer status.
func benchHandler(b *testing.B, status int, h fx.Handler, hdr ...string) {
	app := quiet()
	app.Get("/", h)
	rc := kittest.RequestCtx("GET", "/")
	for i := 0; i+1 < len(hdr); i += 2 {
		rc.Request.Header.Add(hdr[i], hdr[i+1])
	}
	kittest.BenchCtx(b, app.Handler(), rc, status)
}

func BenchmarkSetCookie(b *testing.B) {
	benchHandler(b, 200, func(c *fx.Ctx) error {
		return c.SetCookie(fx.Cookie{Name: "sid", Value: "0123456789abcdef", MaxAge: 3600})
	})
}

func BenchmarkRedirect(b *testing.B) {
	benchHandler(b, 302, func(c *fx.Ctx) error { return c.Redirect(302, "/login") })
}

func BenchmarkBare(b *testing.B) {
	benchHandler(b, 200, func(c *fx.Ctx) error { return nil })
}

type benchRoom struct {
	ID      int64    `json:"id"`
	Name    string   `json:"name"`
	Members []string `json:"members"`
}

type benchRooms struct {
	Rooms []benchRoom `json:"rooms"`
	Next  *string     `json:"next"`
}

// benchRoomList: three rooms, one with a nil Members (null from c.JSON,
// [] from a typed operation).
var benchRoomList = &benchRooms{Rooms: []benchRoom{{1, "general", []string{"ada", "bob"}}, {2, "random", nil}, {3, "ops", []string{"eve"}}}}

// BenchmarkOpOutput: the cost of a typed operation's output encoding
// (nil slices and maps as [] and {}) against c.JSON's, on the same list
// of rooms.
func BenchmarkOpOutput(b *testing.B) {
	typed := fx.New()
	fx.Op(typed, "GET", "/rooms", func(c *fx.Ctx, _ *struct{}) (*benchRooms, error) { return benchRoomList, nil })
	plain := fx.New()
	plain.Get("/rooms", func(c *fx.Ctx) error { return c.JSON(200, benchRoomList) })
	b.Run("op", func(b *testing.B) { kittest.Bench(b, typed.Handler(), "GET", "/rooms", 200) })
	b.Run("json", func(b *testing.B) { kittest.Bench(b, plain.Handler(), "GET", "/rooms", 200) })
}
