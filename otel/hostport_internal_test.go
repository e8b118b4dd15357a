package fxotel

import "testing"

// hostPort never fails: a Host fx lets through but that has no usable
// port gives port 0 (the caller uses the scheme's default). What a span
// carries of it is checked end to end by TestSpanAndMetricPerOutcome (a
// Host without a port: the default 80) and TestPropagationOverSocket
// (the listener's address and port).
func TestHostPort(t *testing.T) {
	for _, tc := range []struct {
		in   string
		host string
		port int
	}{
		{"example.com", "example.com", 0},
		{"example.com:8080", "example.com", 8080},
		{"example.com:99999", "example.com", 0},
		{"example.com:8x", "example.com", 0},
		{"example.com:", "example.com", 0},
		{"[::1]:443", "::1", 443},
		{"[::1]", "::1", 0},
		{"[::1", "[::1", 0},
		{"::1", "::1", 0},
	} {
		if h, p := hostPort([]byte(tc.in)); h != tc.host || p != tc.port {
			t.Errorf("hostPort(%q) = %q, %d; want %q, %d", tc.in, h, p, tc.host, tc.port)
		}
	}
}
