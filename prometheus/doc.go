// Package fxprom exports Prometheus metrics of an fx App: a request
// counter and a duration histogram labelled by method, route pattern,
// status and error code, fed by App.OnResponse so that every response
// counts with the status the client got, and the metrics route that serves
// them.
//
//	import fxprom "github.com/fxhq/fx/prometheus"
//
//	app := fx.New()
//	fxprom.Register(app, fxprom.Config{})  // GET /metrics, default registry
//
// It is a module of its own (github.com/fxhq/fx/prometheus), so that fx
// itself does not depend on client_golang. See Register for the labels,
// what is counted and the cost.
package fxprom
