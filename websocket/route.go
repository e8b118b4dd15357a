package websocket

import "github.com/fxhq/fx"

// Route returns the WebSocket route at path as an fx.Route, documented as
// the GET it is: its 101 Switching Protocols and the envelopes it can
// answer before the upgrade (426 FX_UPGRADE_REQUIRED, 400 FX_BAD_REQUEST,
// 403 FX_FORBIDDEN, 503 FX_SERVICE_UNAVAILABLE), which its handler
// declares. Register it with app.Route (or a Group's Route); it serves
// exactly as app.Get(path, New(h, config...)) does, which documents the
// same refusals but not the 101. Errors, Middleware and Doc are empty
// for the caller to set: the errors they declare add to the refusals,
// never replace them.
func Route(path string, h func(c *Conn) error, config ...Config) fx.Route {
	return fx.Route{
		Method:  "GET",
		Path:    path,
		Handler: New(h, config...),
		Responses: []fx.ResponseDoc{{
			Status: 101,
			Description: "Switching Protocols: the connection speaks WebSocket (RFC 6455) from here on. " +
				"The handler's outcome is the close code: 1000 on success, 4000 + the status of an error " +
				"with its code as the reason, 1011 FX_INTERNAL_ERROR, 1009 over the read limit, " +
				"1007 for invalid UTF-8, 1002 for a protocol error, 1001 at shutdown.",
		}},
	}
}
