package main

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/bench/techempower/internal/world"
	"github.com/fxhq/fx/middleware"
	"github.com/jackc/pgx/v5/pgconn"
)

// newApp is the service: TFB's six routes on fx's router. The database
// routes share a Group whose middleware.Timeout gives each request a
// deadline; c.Context() carries it to every query, so no request waits on
// the database past it. Every failure is an envelope through the App's
// error boundary: an unknown path the 404 FX_NOT_FOUND, a database out of
// reach the 503 FX_SERVICE_UNAVAILABLE (dbFailed), a deadline passed the
// 504 FX_TIMEOUT.
func newApp(db *world.DB, logger *slog.Logger, timeout time.Duration) *fx.App {
	app := fx.New(fx.Config{ServerHeader: "fx", Logger: logger})
	app.Get("/json", hello)
	app.Get("/plaintext", plaintext)
	s := service{db}
	data := app.Group("", middleware.Timeout(timeout))
	data.Get("/db", s.single)
	data.Get("/queries", s.queries)
	data.Get("/fortunes", s.fortunes)
	data.Get("/updates", s.updates)
	return app
}

// message is the json test's object, a new one per request.
type message struct {
	Message string `json:"message"`
}

func hello(c *fx.Ctx) error {
	return c.JSON(200, &message{Message: "Hello, World!"})
}

func plaintext(c *fx.Ctx) error {
	return c.String(200, "Hello, World!")
}

// service holds what the database routes share: the pool.
type service struct{ db *world.DB }

func (s service) single(c *fx.Ctx) error {
	w, err := s.db.World(c.Context())
	if err != nil {
		return dbFailed(c, err)
	}
	return c.JSON(200, &w)
}

func (s service) queries(c *fx.Ctx) error {
	ws, err := s.db.Worlds(c.Context(), count(c))
	if err != nil {
		return dbFailed(c, err)
	}
	return c.JSON(200, ws)
}

func (s service) updates(c *fx.Ctx) error {
	ws, err := s.db.Update(c.Context(), count(c))
	if err != nil {
		return dbFailed(c, err)
	}
	return c.JSON(200, ws)
}

// pages recycles the buffers the fortunes page is rendered into.
var pages = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func (s service) fortunes(c *fx.Ctx) error {
	fs, err := s.db.Fortunes(c.Context())
	if err != nil {
		return dbFailed(c, err)
	}
	b := pages.Get().(*bytes.Buffer)
	defer pages.Put(b)
	b.Reset()
	if err := world.RenderFortunes(b, fs); err != nil {
		return err
	}
	return c.Send(200, world.ContentTypeHTML, b.Bytes()) // Send copies b
}

// count is the number of rows ?queries=N asks for, clamped to
// 1..world.MaxQueries: a value that is missing, empty, not a number or
// below 1 reads one row, one above the maximum reads the maximum.
//
// It reads the parameter with c.Query rather than a typed query schema
// (Route.Query with validate.QueryStruct) on purpose: a schema is fx's
// way to refuse what a route does not accept, with a 400 envelope naming
// the parameter, and TFB's rule is the opposite, every value is accepted
// and brought into range. A schema with a default and a range would
// refuse ?queries=foo and ?queries=501; the test types ask for an answer
// with 1 and 500 rows.
func count(c *fx.Ctx) int {
	n, err := strconv.Atoi(c.Query("queries"))
	if err != nil {
		return 1
	}
	return min(max(n, 1), world.MaxQueries)
}

// errDatabaseUnavailable is the answer when the database cannot be
// reached: 503, sent with Retry-After, prebuilt (its envelope encoded
// once).
var errDatabaseUnavailable = fx.NewCatalogError(fx.ErrorCodes.ServiceUnavailable,
	"The database is unavailable; retry later").Prebuild()

// dbFailed is the answer to a failed database call:
//   - the request's context ended (its deadline passed while waiting for
//     a connection of the full pool or for a statement): err as it is,
//     which middleware.Timeout answers 504 FX_TIMEOUT;
//   - PostgreSQL reported an error in a statement (a PgError outside the
//     connection classes): err as it is, the 500 FX_INTERNAL_ERROR;
//   - anything else (no connection could be opened, a connection was
//     closed or reset, the server is shutting down or starting up, out
//     of connections): 503 FX_SERVICE_UNAVAILABLE with Retry-After: 1,
//     wrapping err for the log.
func dbFailed(c *fx.Ctx, err error) error {
	if c.Context().Err() != nil {
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && !unreachable(pe.Code) {
		return err
	}
	c.SetHeader("Retry-After", "1")
	return fmt.Errorf("%w: %w", errDatabaseUnavailable, err)
}

// unreachable reports whether the SQLSTATE code says the database cannot
// serve now rather than that the statement was wrong: connection
// exceptions (08), insufficient resources (53: too many connections, out
// of memory or disk) and operator intervention other than a cancelled
// statement (57P: shutting down, starting up, crashed).
func unreachable(code string) bool {
	return strings.HasPrefix(code, "08") || strings.HasPrefix(code, "53") || strings.HasPrefix(code, "57P")
}
