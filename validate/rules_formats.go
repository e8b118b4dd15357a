package validate

import (
	"net/netip"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// String formats: one implementation of each, shared by the constraint
// tags (validate:"email", ...) and the builder's StringSchema.Format. Each
// follows go-playground/validator v10's definition of the word of the same
// name (the differential test in validate/adapters/playground holds them
// to it); the deliberate differences are listed in docs/tags.md. Cost:
// email, uuid, hostname, ip, ipv4, ipv6, cidr, alpha, alphanum, numeric,
// hexadecimal and datetime (on a valid value) allocate nothing; url and
// uri parse with net/url, which allocates the parsed URL.

// Format names a string format of StringSchema.Format and its JSON Schema
// "format" keyword.
type Format string

// The formats StringSchema.Format knows.
const (
	FormatEmail    Format = "email"     // an addr-spec local@domain, no display name, no quoted local part
	FormatUUID     Format = "uuid"      // 8-4-4-4-12 hexadecimal digits, any version
	FormatURI      Format = "uri"       // an absolute URL with a scheme (validate:"url")
	FormatIPv4     Format = "ipv4"      // dotted decimal (an IPv4-mapped IPv6 address counts, as with net.IP.To4)
	FormatIPv6     Format = "ipv6"      // an IPv6 address that is not IPv4-mapped
	FormatHostname Format = "hostname"  // RFC 952 host name
	FormatDateTime Format = "date-time" // RFC 3339
)

// formatCheck returns the check of f, or nil for an unknown format.
func formatCheck(f Format) func(string) bool {
	switch f {
	case FormatEmail:
		return isEmail
	case FormatUUID:
		return isUUID
	case FormatURI:
		return isURL
	case FormatIPv4:
		return isIPv4
	case FormatIPv6:
		return isIPv6
	case FormatHostname:
		return isHostname
	case FormatDateTime:
		return func(s string) bool { return isDatetime(s, time.RFC3339) }
	}
	return nil
}

// formatMessage is the issue of a value that is not in format f.
func formatMessage(f Format) string {
	switch f {
	case FormatEmail:
		return "Must be a valid email address"
	case FormatUUID:
		return "Must be a valid UUID"
	case FormatURI:
		return "Must be a valid URL"
	case FormatIPv4:
		return "Must be a valid IPv4 address"
	case FormatIPv6:
		return "Must be a valid IPv6 address"
	case FormatHostname:
		return "Must be a valid hostname"
	case FormatDateTime:
		return "Must be a date-time (RFC 3339)"
	}
	return "Must be in format " + string(f)
}

// emailUnicode reports whether r is one of the non-ASCII characters
// validator's email expression allows.
func emailUnicode(r rune) bool {
	return r >= 0xA0 && r <= 0xD7FF || r >= 0xF900 && r <= 0xFDCF || r >= 0xFDF0 && r <= 0xFFEF
}

func isASCIIAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool      { return c >= '0' && c <= '9' }

// isEmail accepts local@domain where local is dot-separated runs of
// letters, digits, !#$%&'*+-/=?^_`{|}~ and the allowed non-ASCII
// characters, and domain is as emailDomain describes: validator v10's
// decision (no final dot: net/mail, which validator also runs, refuses
// it).
func isEmail(s string) bool {
	at := strings.LastIndexByte(s, '@')
	if at <= 0 || at == len(s)-1 {
		return false
	}
	return emailLocal(s[:at]) && emailDomain(s[at+1:])
}

// emailLocalASCII marks the ASCII bytes an address's local part holds
// between its dots.
var emailLocalASCII = func() (t [utf8.RuneSelf]bool) {
	for c := range byte(utf8.RuneSelf) {
		t[c] = isASCIIAlpha(c) || isDigit(c) || strings.IndexByte("!#$%&'*+-/=?^_`{|}~", c) >= 0
	}
	return t
}()

// emailLocal reports whether local is dot-separated non-empty runs of
// the characters isEmail allows there (one pass, no allocation).
func emailLocal(local string) bool {
	empty := true // the current run is empty
	for i := 0; i < len(local); {
		c := local[i]
		switch {
		case c == '.':
			if empty {
				return false
			}
			empty = true
			i++
			continue
		case c < utf8.RuneSelf:
			if !emailLocalASCII[c] {
				return false
			}
			i++
		default:
			r, n := utf8.DecodeRuneInString(local[i:])
			if !emailUnicode(r) {
				return false
			}
			i += n
		}
		empty = false
	}
	return !empty
}

// emailDomain reports whether domain is one validator v10 accepts (its
// regular expression, and net/mail's dot-atom, both of which it runs):
// every character a letter, a digit, '-', '.', '~' or an allowed
// non-ASCII character; it begins with a letter or digit and ends with a
// letter; no two dots in a row; and some dot has a letter or digit before
// it and a letter after it (where the last label may begin: the
// expression's labels may themselves hold dots, so "0-.0.A" is accepted
// as validator accepts it). One pass, no allocation; an ASCII domain is
// read byte by byte, and any other by runes (emailDomainRunes).
func emailDomain(domain string) bool {
	if domain == "" || domain[0] >= utf8.RuneSelf || domain[len(domain)-1] >= utf8.RuneSelf {
		return emailDomainRunes(domain)
	}
	if !isASCIIAlpha(domain[0]) && !isDigit(domain[0]) || !isASCIIAlpha(domain[len(domain)-1]) {
		return false
	}
	split, prev := false, byte(0)
	for i := 0; i < len(domain); i++ {
		c := domain[i]
		if asciiAlnum[c] {
			prev = c
			continue
		}
		switch {
		case c >= utf8.RuneSelf:
			return emailDomainRunes(domain)
		case c == '.':
			if prev == '.' {
				return false
			}
			if !split && (isASCIIAlpha(prev) || isDigit(prev)) && i+1 < len(domain) {
				next := domain[i+1]
				if next >= utf8.RuneSelf {
					return emailDomainRunes(domain)
				}
				split = isASCIIAlpha(next)
			}
		case c != '-' && c != '~':
			return false
		}
		prev = c
	}
	return split
}

// emailDomainRunes is emailDomain read rune by rune.
func emailDomainRunes(domain string) bool {
	first, _ := utf8.DecodeRuneInString(domain)
	last, _ := utf8.DecodeLastRuneInString(domain)
	if domain == "" || !emailLetter(first, true) || !emailLetter(last, false) {
		return false
	}
	split, prev := false, rune(0)
	for i, r := range domain {
		switch {
		case r == '.':
			if prev == '.' {
				return false
			}
			if !split && emailLetter(prev, true) {
				next, _ := utf8.DecodeRuneInString(domain[i+1:])
				split = emailLetter(next, false)
			}
		case r != '-' && r != '~' && !emailLetter(r, true):
			return false
		}
		prev = r
	}
	return split
}

// emailLetter reports whether r is a letter (or a digit, when digit is
// set) in the sense of isEmail's domain labels.
func emailLetter(r rune, digit bool) bool {
	if r < utf8.RuneSelf {
		return isASCIIAlpha(byte(r)) || digit && isDigit(byte(r))
	}
	return emailUnicode(r)
}

// isUUID accepts 8-4-4-4-12 hexadecimal digits.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if s[i] != '-' {
				return false
			}
		} else if !isHex(s[i]) {
			return false
		}
	}
	return true
}

// isURL accepts what validator's url accepts: a scheme, and a host (or
// a fragment or opaque part; a file: URL needs a path).
func isURL(s string) bool {
	if s == "" {
		return false
	}
	u, err := url.Parse(strings.ToLower(s))
	if err != nil || u.Scheme == "" {
		return false
	}
	if u.Scheme == "file" {
		return u.Path != "" && u.Path != "/"
	}
	return u.Host != "" || u.Fragment != "" || u.Opaque != ""
}

// isURI accepts an absolute URI or an absolute path (net/url's
// ParseRequestURI), a fragment ignored.
func isURI(s string) bool {
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return false
	}
	_, err := url.ParseRequestURI(s)
	return err == nil
}

// parseIP is net.ParseIP without the allocation: no zone.
func parseIP(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(s)
	return a, err == nil && a.Zone() == ""
}

func isIP(s string) bool { _, ok := parseIP(s); return ok }

func isIPv4(s string) bool {
	a, ok := parseIP(s)
	return ok && (a.Is4() || a.Is4In6())
}

func isIPv6(s string) bool {
	a, ok := parseIP(s)
	return ok && !a.Is4() && !a.Is4In6()
}

// isCIDR is net.ParseCIDR's acceptance without its allocations.
func isCIDR(s string) bool {
	addr, mask, ok := strings.Cut(s, "/")
	if !ok || mask == "" {
		return false
	}
	a, ok := parseIP(addr)
	if !ok {
		return false
	}
	bits := 128
	if a.Is4() {
		bits = 32
	}
	n := 0
	for i := 0; i < len(mask); i++ {
		if !isDigit(mask[i]) {
			return false
		}
		if n = n*10 + int(mask[i]-'0'); n > 0xFFFFFF {
			return false
		}
	}
	return n <= bits
}

// isHostname is an RFC 952 host name: dot-separated labels of letters,
// digits and '-', each 1 to 63 characters, beginning and ending with a
// letter or digit, the first one beginning with a letter.
func isHostname(s string) bool {
	if s == "" || !isASCIIAlpha(s[0]) {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		n := len(label)
		if n == 0 || n > 63 || label[0] == '-' || label[n-1] == '-' {
			return false
		}
		for i := 0; i < n; i++ {
			if c := label[i]; !isASCIIAlpha(c) && !isDigit(c) && c != '-' {
				return false
			}
		}
	}
	return true
}

func isDatetime(s, layout string) bool { _, err := time.Parse(layout, s); return err == nil }

func allBytes(s string, ok func(byte) bool) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func isAlpha(s string) bool { return allBytes(s, isASCIIAlpha) }

func isAlphanum(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !asciiAlnum[s[i]] {
			return false
		}
	}
	return true
}

// asciiAlnum marks the ASCII letters and digits.
var asciiAlnum = func() (t [256]bool) {
	for c := range 256 {
		t[c] = isASCIIAlpha(byte(c)) || isDigit(byte(c))
	}
	return t
}()

// isNumeric is [-+]?digits(.digits)?
func isNumeric(s string) bool {
	if s != "" && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	whole, frac, dot := strings.Cut(s, ".")
	return allBytes(whole, isDigit) && (!dot || allBytes(frac, isDigit))
}

// isHexadecimal is (0x)?hexdigits.
func isHexadecimal(s string) bool {
	if len(s) > 2 && s[0] == '0' && s[1]|0x20 == 'x' {
		s = s[2:]
	}
	return allBytes(s, isHex)
}

// isCase reports whether s is not empty and maps to itself under to (a
// per-rune mapping, as strings.ToLower and ToUpper apply to valid UTF-8).
func isCase(s string, to func(rune) rune, whole func(string) string) bool {
	if s == "" {
		return false
	}
	if !utf8.ValidString(s) {
		return s == whole(s)
	}
	for _, r := range s {
		if to(r) != r {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}
