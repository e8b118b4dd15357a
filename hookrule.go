package fx

import "github.com/valyala/fasthttp"

// What an error hook that declines keeps. The boundary
// snapshots the response headers before calling the hook (callHook), then
// gives the hook an empty body. When the hook returns false:
//
//   - if it wrote no body, the header changes it made are kept (added,
//     changed and removed headers: a request ID, Retry-After, a cookie), so
//     a hook can decorate the default envelope; its status is discarded,
//     and Content-Type, Content-Length and Content-Encoding are the
//     envelope's own whatever the hook set (writeEnvelope sets the first,
//     drops the last, fasthttp computes the length from the body);
//   - if it wrote a body (any byte, or a body stream), it was writing a
//     response of its own and changed its mind: the snapshot is restored,
//     so none of its headers, and nothing of its body or status, reaches
//     the client.
//
// A hook that panics is undone entirely, like one that wrote a body.

// hookDeclined undoes, by the rule above, what a hook that did not handle
// the failure wrote to resp.
func (c *Ctx) hookDeclined(resp *fasthttp.Response) {
	if c.out.hookPanicked || resp.IsBodyStream() || len(resp.Body()) > 0 {
		c.hdrSnap.CopyTo(&resp.Header)
	}
	resp.ResetBody()
}
