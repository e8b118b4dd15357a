package fx

import "strings"

// DefaultMultipartMaxParts is Config.MultipartMaxParts's default.
const DefaultMultipartMaxParts = 1000

// withRequestDefaults fills in the Config fields read by the request
// accessors (ClientAddr, MultipartForm) and parses TrustedProxies once, at
// New; invalid entries are kept for Boot to report (App.configErrors).
func (c Config) withRequestDefaults() Config {
	c.trusted = parseTrustedProxies(c.TrustedProxies)
	if c.ClientIPHeader == "" {
		c.ClientIPHeader = "X-Forwarded-For"
	}
	c.clientIPForwarded = strings.EqualFold(c.ClientIPHeader, "Forwarded")
	if c.MultipartMaxParts <= 0 {
		c.MultipartMaxParts = DefaultMultipartMaxParts
	}
	return c
}
