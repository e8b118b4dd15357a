package fxtest

import "time"

// SetServeShutdownTimeout bounds the shutdown Serve runs when a test ends
// at d, for the tests of that bound, and returns the function that puts
// the bound back.
func SetServeShutdownTimeout(d time.Duration) (restore func()) {
	old := serveShutdownTimeout
	serveShutdownTimeout = d
	return func() { serveShutdownTimeout = old }
}
