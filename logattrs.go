package fx

import "log/slog"

// Per-request log attributes: what a middleware adds with AddLogAttrs
// (the RequestID middleware adds request_id) goes onto every line fx
// writes about that request: the boundary's 5xx line, an error hook's or
// the boundary's own failure, an OnResponse observer's panic, and what
// observers such as middleware.AccessLog log with LogAttrs.

// AddLogAttrs adds attrs to the request's log attributes, which fx appends
// to every log line it writes for this request (see above) and which
// LogAttrs returns for logging of your own. They are cleared when the
// request ends. Cost: an append to a slice kept in the pooled Ctx, no
// allocation once the slice has grown (values that are strings, numbers,
// durations or times are stored without allocating, as in slog).
func (c *Ctx) AddLogAttrs(attrs ...slog.Attr) {
	c.out.attrs = append(c.out.attrs, attrs...)
}

// LogAttrs returns the request's log attributes, in the order they were
// added. The slice belongs to the Ctx: do not modify it, and do not keep
// it past the request (append it to a slice of your own, or pass it to
// slog.Logger.LogAttrs, which copies what it keeps).
func (c *Ctx) LogAttrs() []slog.Attr { return c.out.attrs }

// withLogAttrs returns attrs followed by the request's log attributes,
// for fx's own log lines.
func (c *Ctx) withLogAttrs(attrs ...slog.Attr) []slog.Attr {
	return append(attrs, c.out.attrs...)
}
