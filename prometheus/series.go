package fxprom

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/fxhq/fx"
	"github.com/prometheus/client_golang/prometheus"
)

// recorder is the OnResponse observer: it finds the series of a
// response's labels and updates them.
//
// Why a cache in front of client_golang: WithLabelValues hashes the four
// label values and takes a read lock on every call, and needs the status
// as a string, which costs an allocation per request. Here the series of
// each combination seen are kept in a map keyed by the raw values (the
// status as an int, the method as a small int), read without a lock
// through an atomic pointer. A new combination copies the map under mu
// (copy-on-write): the combinations are few (routes x methods x statuses x
// codes actually seen) and stop appearing soon after start-up, so the
// copies are a start-up cost, and readers never wait.
type recorder struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	ws       *wsRecorder // the connection figures of a 101

	mu     sync.Mutex // serialises additions to series
	series atomic.Pointer[map[seriesKey]*series]
}

// seriesKey is one label combination, in raw form.
type seriesKey struct {
	route, code string
	status      int
	method      uint8 // index into methods
}

// series holds the children of one label combination.
type series struct {
	requests prometheus.Counter
	duration prometheus.Observer
	route    string // the route label's value, owned by the series
}

func newRecorder(requests *prometheus.CounterVec, duration *prometheus.HistogramVec, ws *wsRecorder) *recorder {
	r := &recorder{requests: requests, duration: duration, ws: ws}
	empty := map[seriesKey]*series{}
	r.series.Store(&empty)
	return r
}

// observe counts c's response. No allocation once its combination has
// been seen.
func (r *recorder) observe(c *fx.Ctx) {
	k := seriesKey{
		route:  c.Route(),
		code:   c.ErrorCode(),
		status: c.Status(),
		method: methodIndex(c.RequestCtx().Method()),
	}
	s := (*r.series.Load())[k]
	if s == nil {
		s = r.add(k)
	}
	s.requests.Inc()
	// A transport error or the over-capacity 503 has no measured
	// duration (0): observing it would report it as instant.
	if d := c.Duration(); d > 0 {
		s.duration.Observe(d.Seconds())
	}
	if k.status == 101 {
		r.ws.observe(c, s.route) // a WebSocket connection, at its end
	}
}

// add returns the series of k, creating it (and a copy of the map that
// holds it) when no other request did first. The label strings are copied:
// Route and ErrorCode are the App's own strings, but a code may have been
// built by the application from request data that is later reused.
func (r *recorder) add(k seriesKey) *series {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := *r.series.Load()
	if s := old[k]; s != nil {
		return s
	}
	k.route, k.code = clone(k.route), clone(k.code)
	labels := []string{methods[k.method], k.route, strconv.Itoa(k.status), k.code}
	s := &series{requests: r.requests.WithLabelValues(labels...), duration: r.duration.WithLabelValues(labels...), route: k.route}
	next := make(map[seriesKey]*series, len(old)+1)
	for ok, os := range old {
		next[ok] = os
	}
	next[k] = s
	r.series.Store(&next)
	return s
}

func clone(s string) string {
	if s == "" {
		return ""
	}
	return string(append([]byte(nil), s...))
}

// methods are the method label's values: the methods of RFC 9110 and
// PATCH, and otherMethod for every other one (OpenTelemetry's convention),
// which bounds the label's values whatever clients send.
var methods = [...]string{"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", otherMethod}

const otherMethod = "_OTHER"

// methodIndex returns m's index in methods. The switch on string(m) does
// not allocate.
func methodIndex(m []byte) uint8 {
	switch string(m) {
	case "GET":
		return 0
	case "HEAD":
		return 1
	case "POST":
		return 2
	case "PUT":
		return 3
	case "DELETE":
		return 4
	case "CONNECT":
		return 5
	case "OPTIONS":
		return 6
	case "TRACE":
		return 7
	case "PATCH":
		return 8
	}
	return uint8(len(methods) - 1)
}
