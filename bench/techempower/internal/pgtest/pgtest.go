// Package pgtest runs a real PostgreSQL for the tests of the TechEmpower
// entries: postgres.sh (beside the module's go.mod) starts a private
// instance in a new directory under the system's temporary directory, on a
// free loopback port, loaded with TFB's database, and the test's cleanup
// stops it and removes its directory. Nothing is mocked.
//
// Without PostgreSQL on the machine (no server under /usr/lib/postgresql)
// a test that asks for one is skipped, except under CI (CI=true), where
// postgres.sh installs it or the test fails.
package pgtest

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Server is a PostgreSQL started by postgres.sh.
type Server struct {
	// URL is the pgx connection string of TFB's database hello_world as
	// benchmarkdbuser (postgres://...@127.0.0.1:PORT/hello_world).
	URL string
	// Dir is the data directory.
	Dir string

	tb      testing.TB
	mu      sync.Mutex
	stopped bool
}

// Script is the path of postgres.sh.
func Script() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "postgres.sh")
}

// Start starts PostgreSQL on a free loopback port and loads TFB's
// database; the test's cleanup stops it and removes its data.
func Start(tb testing.TB) *Server {
	tb.Helper()
	if bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres"); len(bins) == 0 && os.Getenv("CI") != "true" {
		tb.Skip("PostgreSQL is not installed: apt-get install postgresql postgresql-contrib (or run under CI=true, where postgres.sh installs it)")
	}
	var lastErr string
	for range 3 { // the free port can be taken between Close and PostgreSQL binding it
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		// Directly under the temporary directory: run as root, the server
		// runs as the postgres user, which cannot enter t.TempDir()'s
		// root-only parent.
		dir, err := os.MkdirTemp("", "fx-postgres-")
		if err != nil {
			tb.Fatal(err)
		}
		s := &Server{Dir: dir, tb: tb}
		out, err := s.script("start", dir, strconv.Itoa(port))
		if err == nil {
			tb.Cleanup(func() {
				s.Stop()
				os.RemoveAll(dir)
			})
			lines := strings.Split(strings.TrimSpace(out), "\n")
			s.URL = strings.TrimPrefix(lines[len(lines)-1], "DATABASE_URL=")
			return s
		}
		lastErr = err.Error() + ": " + out
		s.script("stop", dir) // a half-started server
		os.RemoveAll(dir)
	}
	tb.Fatalf("PostgreSQL did not start: %s", lastErr)
	return nil
}

// Stop stops the server (a fast shutdown: open sessions are ended) and
// waits for it to exit. Stopping a stopped server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	if out, err := s.script("stop", s.Dir); err != nil {
		s.tb.Errorf("stopping PostgreSQL: %v: %s", err, out)
	}
	s.stopped = true
}

// Restart starts the stopped server again, with its data and port.
func (s *Server) Restart() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if out, err := s.script("restart", s.Dir); err != nil {
		s.tb.Fatalf("restarting PostgreSQL: %v: %s", err, out)
	}
	s.stopped = false
}

// script runs postgres.sh with args and returns its output.
func (s *Server) script(args ...string) (string, error) {
	var out bytes.Buffer
	cmd := exec.Command("bash", append([]string{Script()}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}
