// Command raw serves TechEmpower's six tests (json, plaintext, db,
// queries, fortunes, updates) on fasthttp alone: a switch on the path for a
// router, headers and bodies written by hand. It is the floor the fx entry
// is measured against (bench/techempower/load.sh): its database work is
// internal/world's, the same statements, pool and template as fx's, so the
// difference between the two is the framework.
//
// Its database calls take context.Background(), as TFB's fasthttp entry
// does: no deadline, nothing for pgx to watch. Passing the RequestCtx
// instead (a context whose Done channel is the server's) would make every
// statement start a goroutine (context.AfterFunc on a context the
// context package does not know), a cost a floor should not carry.
//
// Usage: DATABASE_URL=postgres://... raw [-addr 127.0.0.1:8080]
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"strconv"
	"sync"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"github.com/fxhq/fx/bench/techempower/internal/world"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	flag.Parse()
	db, err := world.Open(os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	log.Fatal(newServer(db).ListenAndServe(*addr))
}

// newServer is the fasthttp server of the six tests on db.
func newServer(db *world.DB) *fasthttp.Server {
	return &fasthttp.Server{Name: "fasthttp", Handler: (&server{db: db}).serve}
}

type server struct{ db *world.DB }

func (s *server) serve(ctx *fasthttp.RequestCtx) {
	if !ctx.IsGet() {
		ctx.Error("Method Not Allowed", fasthttp.StatusMethodNotAllowed)
		return
	}
	switch string(ctx.Path()) {
	case "/json":
		writeJSON(ctx, &message{Message: "Hello, World!"})
	case "/plaintext":
		ctx.Response.Header.SetContentType("text/plain; charset=utf-8")
		ctx.Response.SetBodyString("Hello, World!")
	case "/db":
		w, err := s.db.World(context.Background())
		if err != nil {
			dbError(ctx, err)
			return
		}
		writeJSON(ctx, &w)
	case "/queries":
		ws, err := s.db.Worlds(context.Background(), queries(ctx))
		if err != nil {
			dbError(ctx, err)
			return
		}
		writeJSON(ctx, ws)
	case "/fortunes":
		fs, err := s.db.Fortunes(context.Background())
		if err != nil {
			dbError(ctx, err)
			return
		}
		ctx.Response.Header.SetContentType(world.ContentTypeHTML)
		if err := world.RenderFortunes(ctx, fs); err != nil {
			dbError(ctx, err)
		}
	case "/updates":
		ws, err := s.db.Update(context.Background(), queries(ctx))
		if err != nil {
			dbError(ctx, err)
			return
		}
		writeJSON(ctx, ws)
	default:
		ctx.Error("Not Found", fasthttp.StatusNotFound)
	}
}

type message struct {
	Message string `json:"message"`
}

// queries is the queries parameter clamped to 1..500: missing, empty, not
// a number or below 1 is 1; above 500 (world.MaxQueries) is 500.
func queries(ctx *fasthttp.RequestCtx) int {
	n, err := strconv.Atoi(string(ctx.QueryArgs().Peek("queries")))
	switch {
	case err != nil || n < 1:
		return 1
	case n > world.MaxQueries:
		return world.MaxQueries
	}
	return n
}

func dbError(ctx *fasthttp.RequestCtx, err error) {
	log.Print(err)
	ctx.ResetBody()
	ctx.Error("Internal Server Error", fasthttp.StatusInternalServerError)
}

// encoder is a pooled go-json encoder that appends to a response body.
type encoder struct {
	resp *fasthttp.Response
	enc  *json.Encoder
}

func (e *encoder) Write(p []byte) (int, error) {
	n := len(p)
	if n > 0 && p[n-1] == '\n' { // the newline Encode ends with
		p = p[:n-1]
	}
	e.resp.AppendBody(p)
	return n, nil
}

var encoders = sync.Pool{New: func() any {
	e := &encoder{}
	e.enc = json.NewEncoder(e)
	e.enc.SetEscapeHTML(false)
	return e
}}

func writeJSON(ctx *fasthttp.RequestCtx, v any) {
	e := encoders.Get().(*encoder)
	e.resp = &ctx.Response
	err := e.enc.Encode(v)
	e.resp = nil
	encoders.Put(e)
	if err != nil {
		dbError(ctx, err)
		return
	}
	ctx.Response.Header.SetContentType("application/json")
}
