package fx

import (
	"errors"
	"strconv"
)

// Redirect answers with status (301, 302, 303, 307 or 308) and a Location
// header of location, exactly as given: a relative reference ("/login",
// "../up", "?page=2") is sent relative, never resolved against the
// request's Host header (which the client chooses). The body is empty.
//
// It returns an error, writing nothing, for any other status or for a
// location that is empty or has a control character (CR and LF would
// split the header and let the location inject headers of its own).
// Return the error: it is a 500 FX_INTERNAL_ERROR, as for any programming
// error.
//
// Open redirects: never pass a location taken from the request (a
// "?next=" parameter) unchecked, or your domain becomes a phishing
// relay. Accept only paths of your own: one that starts with "/" but not
// with "//" or "/\" (which browsers read as another host), or compare
// against a list. Cost: no allocation.
func (c *Ctx) Redirect(status int, location string) error {
	switch status {
	case 301, 302, 303, 307, 308:
	default:
		return errors.New("fx: Redirect: status " + strconv.Itoa(status) + " is not a redirect (301, 302, 303, 307, 308)")
	}
	if location == "" {
		return errors.New("fx: Redirect: empty location")
	}
	for i := 0; i < len(location); i++ {
		if b := location[i]; b < 0x20 || b == 0x7f {
			return errors.New("fx: Redirect: location has a control character")
		}
	}
	resp := &c.rc.Response
	resp.ResetBody()
	resp.SetStatusCode(status)
	resp.Header.Set("Location", location)
	return nil
}

// AddHeader adds a response header value, keeping the values already set
// under name (SetHeader replaces them): several Link, Vary or
// Cache-Control lines. fasthttp keeps one value for the headers it
// manages itself (Content-Type, Content-Length, Server, Date, Connection,
// Transfer-Encoding): for those AddHeader replaces, as SetHeader does.
// Cookies go through SetCookie. Cost: no allocation once the response
// header buffer has grown.
func (c *Ctx) AddHeader(name, value string) { c.rc.Response.Header.Add(name, value) }
