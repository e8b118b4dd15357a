package health_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"regexp"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/health"
)

// Probes for a load balancer: /livez has no checks (a database outage must
// not restart the process), /readyz pings the database. A failing check is
// the 503 envelope with each result in details; the raw error text
// ("dial tcp ...") is logged, not sent, unless fx.Config.Development is set.
func ExampleNew() {
	app := fx.New(fx.Config{Logger: silentLogger})
	h := health.New(health.Config{Timeout: time.Second})
	dbUp := true
	h.AddReadiness("db", func(ctx context.Context) error {
		if !dbUp {
			return errors.New("dial tcp 10.0.0.7:5432: connection refused")
		}
		return nil // a real check: return db.PingContext(ctx)
	})
	h.Register(app) // GET /livez, GET /readyz

	showProbe(app, "/livez")
	showProbe(app, "/readyz")
	dbUp = false
	showProbe(app, "/readyz")
	app.Shutdown()
	// Output:
	// 200 {"status":"ok"}
	// 200 {"status":"ok","checks":{"db":{"status":"ok","duration_ms":N}}}
	// 503 {"error":{"code":"FX_SERVICE_UNAVAILABLE","message":"Readiness check failed: db","details":{"checks":{"db":{"status":"fail","duration_ms":N}}}}}
}

// silentLogger keeps the examples' output to the responses.
var silentLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// durations vary from run to run: showProbe prints them as N.
var durationMS = regexp.MustCompile(`"duration_ms":\d+`)

func showProbe(app *fx.App, path string) {
	resp, err := app.Test(httptest.NewRequest("GET", path, nil))
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, durationMS.ReplaceAllString(string(b), `"duration_ms":N`))
}
