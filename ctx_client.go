package fx

import (
	"bytes"
	"net"
	"net/netip"
	"strings"
)

// Client address behind proxies. The socket peer is the only address a
// server knows for certain; X-Forwarded-For and Forwarded are written by
// whoever sent the request, so a client can put any address there. Reading
// them by default (as many frameworks did) let any client choose the IP a
// rate limiter or an audit log sees. fx therefore trusts the headers only
// through Config.TrustedProxies, and reads them right to left: each
// trusted hop vouches for the entry to its left, and the first address
// that is not a trusted proxy is the client.

// maxForwardedHops bounds the entries ClientAddr keeps from the forwarding
// header(s): the rightmost maxForwardedHops, which are all a chain of
// trusted proxies can vouch for (a longer header is attacker padding).
const maxForwardedHops = 16

// trustedProxies is Config.TrustedProxies parsed (at New).
type trustedProxies struct {
	prefixes []netip.Prefix
	errs     []error // one per invalid entry; Boot reports them
}

// parseTrustedProxies parses CIDR prefixes ("10.0.0.0/8", "fd00::/8") and
// single addresses ("192.0.2.1", "::1"); an entry that is neither is
// recorded as a configuration error (FX_INTERNAL_ERROR at Boot).
func parseTrustedProxies(list []string) trustedProxies {
	var t trustedProxies
	for _, s := range list {
		s = strings.TrimSpace(s)
		if p, err := netip.ParsePrefix(s); err == nil {
			t.prefixes = append(t.prefixes, p.Masked())
			continue
		}
		if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
			a = a.Unmap()
			t.prefixes = append(t.prefixes, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		t.errs = append(t.errs, catalogError(ErrorCodes.InternalError,
			"Config.TrustedProxies: "+quoteConfig(s)+" is neither a CIDR prefix nor an IP address"))
	}
	return t
}

func quoteConfig(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return `"` + strings.ToValidUTF8(s, "?") + `"`
}

func (t *trustedProxies) contains(a netip.Addr) bool {
	for _, p := range t.prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// configErrors is every configuration error Config recorded at New; Boot
// reports them with the other configuration errors.
func (a *App) configErrors() []error { return a.cfg.trusted.errs }

// ClientAddr returns the address of the client: the socket peer, or, when
// the peer is one of Config.TrustedProxies, the address the proxies
// forwarded. The header named by Config.ClientIPHeader (X-Forwarded-For
// by default, or RFC 7239 Forwarded) is read right to left, starting from
// the peer: while the current hop is a trusted proxy, the entry it
// appended (the next one to the left) becomes the current hop; the first
// hop that is not a trusted proxy is the client. So
//
//   - with TrustedProxies empty (the default), or a peer that is not
//     trusted, the headers are ignored entirely: the peer is the client,
//     whatever a client wrote in them;
//   - entries left of the client (added by the client itself, or by
//     untrusted hops) are never read;
//   - an entry a trusted proxy wrote that is not an address ("unknown",
//     an obfuscated "_hidden" identifier, garbage) ends the walk at that
//     proxy: the proxy's address is returned, the nearest one known;
//   - when every hop is trusted, the leftmost address is returned;
//   - only the rightmost 16 entries are considered.
//
// Only the configured header is read: a proxy that appends to
// X-Forwarded-For passes a client's own Forwarded header through, so
// reading "Forwarded if present" would let that client choose its IP.
// IPv4-mapped IPv6 addresses are unmapped; ports are dropped. Several
// header lines count as one list, in order.
//
// The result is the zero Addr when the peer address is unknown: a
// net.Conn whose RemoteAddr is not an IP, such as app.Test's in-memory
// connection (drive the handler with a RequestCtx from Init to test
// addresses, as ExampleCtx_ClientAddr does).
//
// Cost: without trusted proxies, the peer's address only (no
// allocation); with them, one pass over the header, no allocation
// (BenchmarkClientAddr: about 0.5 µs over a bare route for a three-entry
// X-Forwarded-For).
func (c *Ctx) ClientAddr() netip.Addr {
	peer := peerAddr(c.rc.RemoteAddr())
	t := &c.app.cfg.trusted
	if len(t.prefixes) == 0 || !peer.IsValid() || !t.contains(peer) {
		return peer
	}
	var buf [maxForwardedHops]hop
	hops := buf[:0]
	forwarded := c.app.cfg.clientIPForwarded
	for _, line := range c.rc.Request.Header.PeekAll(c.app.cfg.ClientIPHeader) {
		if forwarded {
			hops = appendForwardedHops(hops, line)
		} else {
			hops = appendListHops(hops, line)
		}
	}
	cur := peer
	for i := len(hops) - 1; i >= 0; i-- {
		if !t.contains(cur) {
			return cur
		}
		if !hops[i].ok {
			return cur // the trusted proxy could not say who sent it the request
		}
		cur = hops[i].addr
	}
	return cur
}

// peerAddr is the IP of a connection's remote address, unmapped.
func peerAddr(addr net.Addr) netip.Addr {
	switch a := addr.(type) {
	case *net.TCPAddr:
		ip, ok := netip.AddrFromSlice(a.IP)
		if !ok {
			return netip.Addr{}
		}
		return ip.Unmap()
	case nil:
		return netip.Addr{}
	}
	if ap, err := netip.ParseAddrPort(addr.String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}

// hop is one entry of a forwarding header: an address, or !ok for an entry
// that is not one.
type hop struct {
	addr netip.Addr
	ok   bool
}

// pushHop appends h, keeping only the rightmost maxForwardedHops entries.
func pushHop(hops []hop, h hop) []hop {
	if len(hops) == maxForwardedHops {
		copy(hops, hops[1:])
		hops = hops[:len(hops)-1]
	}
	return append(hops, h)
}

// appendListHops parses a comma-separated list of addresses
// (X-Forwarded-For, X-Real-IP and the like).
func appendListHops(hops []hop, line []byte) []hop {
	for len(line) > 0 {
		var item []byte
		item, line, _ = bytes.Cut(line, []byte{','})
		item = bytes.TrimSpace(item)
		if len(item) == 0 {
			continue // empty list elements are allowed and mean nothing (RFC 9110 5.6.1)
		}
		hops = pushHop(hops, parseNode(item))
	}
	return hops
}

// parseNode parses an address as forwarding headers carry it: "192.0.2.1",
// "192.0.2.1:8080", "2001:db8::1", "[2001:db8::1]", "[2001:db8::1]:8080".
// Zones, "unknown" and obfuscated identifiers are not addresses.
func parseNode(b []byte) hop {
	s := b2s(b)
	if a, err := netip.ParseAddr(s); err == nil {
		if a.Zone() != "" {
			return hop{}
		}
		return hop{a.Unmap(), true}
	}
	if len(s) > 0 && s[0] == '[' {
		if end := strings.IndexByte(s, ']'); end > 0 {
			rest := s[end+1:]
			if rest != "" && (rest[0] != ':' || !isPort(rest[1:])) {
				return hop{}
			}
			if a, err := netip.ParseAddr(s[1:end]); err == nil && a.Is6() && a.Zone() == "" {
				return hop{a.Unmap(), true}
			}
		}
		return hop{}
	}
	if i := strings.LastIndexByte(s, ':'); i > 0 && isPort(s[i+1:]) {
		if a, err := netip.ParseAddr(s[:i]); err == nil && a.Is4() {
			return hop{a, true}
		}
	}
	return hop{}
}

// isPort reports whether s is a port: 1-5 digits (RFC 7239 also allows
// obfuscated ports, "_abc"; they are accepted and ignored).
func isPort(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == '_' {
		return true
	}
	if len(s) > 5 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// appendForwardedHops parses one Forwarded header line (RFC 7239 section
// 4): comma-separated elements of semicolon-separated token=value pairs,
// values tokens or quoted strings. Each element is one hop; its for=
// parameter is the address. An element without for=, with a malformed
// pair or an unterminated quote is a hop that is not an address, so a
// trusted proxy's entry can never be swallowed into the client's.
func appendForwardedHops(hops []hop, line []byte) []hop {
	i := 0
	for i <= len(line) {
		h, next, any := parseForwardedElement(line, i)
		if any {
			hops = pushHop(hops, h)
		}
		if next < 0 {
			break
		}
		i = next
	}
	return hops
}

// parseForwardedElement parses the element starting at line[i:]. It
// returns the hop, the index after the element's comma (-1 at the end of
// line), and whether the element had any content.
func parseForwardedElement(line []byte, i int) (h hop, next int, any bool) {
	valid := true
	var forValue []byte
	haveFor := false
	for {
		// One pair: optional whitespace, token, '=', value.
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i >= len(line) {
			return finishElement(valid, haveFor, forValue), -1, any
		}
		if line[i] == ',' {
			return finishElement(valid, haveFor, forValue), i + 1, any
		}
		if line[i] == ';' {
			i++
			continue
		}
		any = true
		start := i
		for i < len(line) && isTokenChar(line[i]) {
			i++
		}
		name := line[start:i]
		if len(name) == 0 || i >= len(line) || line[i] != '=' {
			valid = false
			i = skipToSeparator(line, i)
			continue
		}
		i++ // '='
		var value []byte
		if i < len(line) && line[i] == '"' {
			v, end, ok := unquote(line, i)
			if !ok {
				// Unterminated: everything to the end of the line is this
				// element, and it is not an address.
				return hop{}, -1, true
			}
			value, i = v, end
		} else {
			start := i
			for i < len(line) && isTokenChar(line[i]) {
				i++
			}
			value = line[start:i]
		}
		if i < len(line) && line[i] != ';' && line[i] != ',' && line[i] != ' ' && line[i] != '\t' {
			valid = false
			i = skipToSeparator(line, i)
		}
		if len(name) == 3 && (name[0]|0x20) == 'f' && (name[1]|0x20) == 'o' && (name[2]|0x20) == 'r' {
			if haveFor {
				valid = false // two for= in one element: ambiguous
			}
			haveFor, forValue = true, value
		}
	}
}

func finishElement(valid, haveFor bool, v []byte) hop {
	if !valid || !haveFor {
		return hop{}
	}
	return parseNode(v)
}

// skipToSeparator returns the index of the next ';' or ',' at or after i
// outside a quoted string, or len(line).
func skipToSeparator(line []byte, i int) int {
	for i < len(line) {
		switch line[i] {
		case ';', ',':
			return i
		case '"':
			_, end, ok := unquote(line, i)
			if !ok {
				return len(line)
			}
			i = end
			continue
		}
		i++
	}
	return i
}

// unquote reads the quoted string at line[i] (a '"'). It returns the
// content (escapes kept: an address never contains a backslash, so a
// value with one simply fails to parse), the index after the closing
// quote, and false when the string is not terminated.
func unquote(line []byte, i int) (value []byte, end int, ok bool) {
	for j := i + 1; j < len(line); j++ {
		switch line[j] {
		case '\\':
			j++
		case '"':
			return line[i+1 : j], j + 1, true
		}
	}
	return nil, len(line), false
}

// isTokenChar reports whether b may appear in an RFC 9110 token.
func isTokenChar(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0
}
