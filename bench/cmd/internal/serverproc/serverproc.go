// Package serverproc holds what the measuring commands that run
// cmd/server as a process of its own (cmd/idle, cmd/conncount) share:
// building it, waiting until it answers, and the one GET /hello they send
// on a raw connection. Only 127.0.0.1 is used.
package serverproc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// Build builds ./cmd/server (the command must run from bench/) into dir
// and returns the binary's path; the build's output goes to stderr.
func Build(dir string) (string, error) {
	bin := filepath.Join(dir, "server")
	build := exec.Command("go", "build", "-o", bin, "./cmd/server")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("building cmd/server (run from bench/): %w", err)
	}
	return bin, nil
}

// WaitReady asks each of urls with a GET, 100 ms apart, until all of
// them answer, at most tries times (a server under valgrind starts
// slowly); it closes its connections before it returns.
func WaitReady(tries int, urls ...string) error {
	client := &http.Client{Timeout: 2 * time.Second}
	defer client.CloseIdleConnections()
	for range tries {
		ready := true
		for _, u := range urls {
			r, err := client.Get(u)
			if err != nil {
				ready = false
				break
			}
			r.Body.Close()
		}
		if ready {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("the server did not start")
}

// GetHello sends GET /hello on c and reads its answer from br (a reader
// of c, kept across requests); an answer other than 200 is an error.
func GetHello(c net.Conn, br *bufio.Reader) error {
	if _, err := io.WriteString(c, "GET /hello HTTP/1.1\r\nHost: bench\r\n\r\n"); err != nil {
		return err
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("GET /hello: %d", resp.StatusCode)
	}
	return nil
}
