package fxprom

import (
	"log/slog"
	"strconv"

	"github.com/fxhq/fx"
	"github.com/prometheus/client_golang/prometheus"
)

// The metrics of WebSocket connections (package websocket), beside the
// request counter and histogram that count each connection once, as a
// 101 with its whole duration.
const (
	// WebSocketMessagesName is the counter of the data messages the
	// connections carried, by route and direction ("in": from the peer,
	// "out": to it).
	WebSocketMessagesName = "websocket_messages_total"
	// WebSocketBytesName is the counter of the data messages' payload
	// bytes, by route and direction.
	WebSocketBytesName = "websocket_bytes_total"
	// WebSocketClosesName is the counter of ended connections, by route
	// and close code (an application code the peer chose, 3000 and up,
	// is the one label "peer_app"). The close reason of an error outcome is the code
	// label of the connection's http_server_requests_total series; a
	// peer's own reason is free text and is never a label.
	WebSocketClosesName = "websocket_closes_total"
)

// wsRecorder adds an upgraded request's connection figures, which
// package websocket leaves as ws_* log attributes, to the WebSocket
// counters.
type wsRecorder struct {
	messages, bytes, closes *prometheus.CounterVec
}

func newWSRecorder(reg prometheus.Registerer) (*wsRecorder, error) {
	w := &wsRecorder{}
	var err error
	if w.messages, err = registerOrReuse(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: WebSocketMessagesName,
		Help: "WebSocket data messages, by route pattern and direction (in: from the peer, out: to it).",
	}, []string{"route", "direction"})); err != nil {
		return nil, err
	}
	if w.bytes, err = registerOrReuse(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: WebSocketBytesName,
		Help: "WebSocket data message payload bytes, by route pattern and direction (in: from the peer, out: to it).",
	}, []string{"route", "direction"})); err != nil {
		return nil, err
	}
	if w.closes, err = registerOrReuse(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: WebSocketClosesName,
		Help: "Ended WebSocket connections, by route pattern and close code.",
	}, []string{"route", "close_code"})); err != nil {
		return nil, err
	}
	return w, nil
}

// observe counts the connection of c, an upgraded request observed when
// its connection ended. A 101 without the figures (not served by package
// websocket) counts nothing here. Cost: once per connection, not per
// message: one pass over the request's log attributes and a
// WithLabelValues (a hash and a read lock) per figure, and the close
// code formatted as its label (one allocation): about 2-3 µs
// (BenchmarkObserveWebSocket against BenchmarkWebSocketBaseline).
func (w *wsRecorder) observe(c *fx.Ctx, route string) {
	code, byPeer := int64(-1), false
	for _, a := range c.LogAttrs() {
		if a.Key == "ws_closed_by_peer" && a.Value.Kind() == slog.KindBool {
			byPeer = a.Value.Bool()
		}
		if a.Value.Kind() != slog.KindInt64 {
			continue
		}
		n := a.Value.Int64()
		switch a.Key {
		case "ws_messages_in":
			w.messages.WithLabelValues(route, "in").Add(float64(n))
		case "ws_messages_out":
			w.messages.WithLabelValues(route, "out").Add(float64(n))
		case "ws_bytes_in":
			w.bytes.WithLabelValues(route, "in").Add(float64(n))
		case "ws_bytes_out":
			w.bytes.WithLabelValues(route, "out").Add(float64(n))
		case "ws_close_code":
			code = n
		}
	}
	if code >= 0 {
		w.closes.WithLabelValues(route, closeCodeLabel(code, byPeer)).Inc()
	}
}

// closeCodeLabel is the close_code label of code: the code itself, except
// an application code (3000 and up) the peer chose, which is "peer_app":
// a client picks any of 2,000 such codes, and each would be a series of
// its own.
func closeCodeLabel(code int64, byPeer bool) string {
	if byPeer && code >= 3000 {
		return "peer_app"
	}
	return strconv.FormatInt(code, 10)
}
