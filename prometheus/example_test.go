package fxprom_test

import (
	"bufio"
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/fxhq/fx"
	fxprom "github.com/fxhq/fx/prometheus"
	"github.com/prometheus/client_golang/prometheus"
)

// ExampleRegister counts a request served by a route and a 404, then
// reads the counter from /metrics: the route label is the pattern, and ""
// for the unmatched request, never the raw path.
func ExampleRegister() {
	app := fx.New()
	app.Get("/users/:id", func(c *fx.Ctx) error { return c.String(200, "user") })
	fxprom.Register(app, fxprom.Config{Registry: prometheus.NewRegistry()}) // GET /metrics

	for _, target := range []string{"/users/42", "/no/such/page", "/metrics"} {
		resp, _ := app.Test(httptest.NewRequest("GET", target, nil))
		if target != "/metrics" {
			continue
		}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), fxprom.RequestsName) {
				fmt.Println(sc.Text())
			}
		}
	}
	// Output:
	// http_server_requests_total{code="",method="GET",route="/users/:id",status="200"} 1
	// http_server_requests_total{code="FX_NOT_FOUND",method="GET",route="",status="404"} 1
}
