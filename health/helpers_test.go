package health_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
)

// get sends GET path to app through fxtest (which boots app and shuts it
// down when the test ends).
func get(t testing.TB, app *fx.App, path string) *fxtest.Response {
	t.Helper()
	return fxtest.New(t, app).Get(path).Do()
}

// quiet returns an App that logs nothing.
func quiet() *fx.App { return fx.New(fx.Config{Logger: silentLogger}) }

// logRecords is a slog.Handler keeping each record as a map: "msg" and
// the record's attributes.
type logRecords struct {
	mu   sync.Mutex
	recs []map[string]any
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logRecords) WithGroup(string) slog.Handler            { return l }
func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	m := map[string]any{"msg": r.Message}
	r.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.Resolve().Any(); return true })
	l.mu.Lock()
	l.recs = append(l.recs, m)
	l.mu.Unlock()
	return nil
}

// records returns the records logged so far.
func (l *logRecords) records(testing.TB) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]map[string]any(nil), l.recs...)
}

// newLogged returns an App configured by cfg whose records are kept.
func newLogged(cfg fx.Config) (*fx.App, *logRecords) {
	l := &logRecords{}
	cfg.Logger = slog.New(l)
	return fx.New(cfg), l
}
