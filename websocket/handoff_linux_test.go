//go:build linux

package websocket_test

import (
	"errors"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/fxhq/fx/internal/deploytest"
	gws "github.com/gorilla/websocket"
)

// TestDeployHandOffClosesWebSocketsWith1001: a restart by the hand-off
// (SIGHUP, App.HandOff; docs/reliability.md) closes every WebSocket of
// the old process with 1001 and loses no HTTP request. It builds
// testdata/handoffd, runs it on 127.0.0.1 and hands it on to a new
// process (of the replaced binary) handoffRounds times while
// handoffSockets WebSockets are open on the current process and
// handoffLoaders keep-alive clients GET /work without pause. After each
// hand-off, every WebSocket of the old process must have read a close
// frame with 1001 (only the old process holds those connections, so the
// frame came from it, before it exited; a process that ends without the
// close frame leaves gorilla an EOF, not a CloseError), new WebSockets
// must open on the new process, and at the end no GET may have failed.
//
// Like the root module's TestDeploy* tests it builds a binary and runs
// seconds of load, so it runs only with FX_DEPLOY_TEST=1 (.ci/run's
// deploy block).
func TestDeployHandOffClosesWebSocketsWith1001(t *testing.T) {
	const (
		handoffSockets = 20
		handoffLoaders = 4
		handoffRounds  = 3
	)
	deploytest.RequireDeployTest(t)
	built := filepath.Join(t.TempDir(), "handoffd.build")
	if out, err := exec.Command("go", "build", "-o", built, "./testdata/handoffd").CombinedOutput(); err != nil {
		t.Fatalf("go build ./testdata/handoffd: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	d := deploytest.NewDeployed(t, built, addr)
	pid := d.Start(t, exec.Command(d.Bin))

	// The HTTP load: a few keep-alive clients, until stopped.
	tr := &http.Transport{MaxIdleConnsPerHost: handoffLoaders, DisableCompression: true}
	defer tr.CloseIdleConnections()
	load := deploytest.StartGetLoad(&http.Client{Transport: tr, Timeout: 15 * time.Second}, "http://"+addr+"/work", handoffLoaders)

	socks := openSockets(t, addr, pid, handoffSockets)
	for range handoffRounds {
		time.Sleep(300 * time.Millisecond) // requests and sockets are busy on the current process
		_, next := d.HandOff(t)
		deploytest.WaitGone(t, pid)
		requireGoingAway(t, socks, pid)
		pid = next
		socks = openSockets(t, addr, pid, handoffSockets) // the old process is gone: these are the new one's
	}
	time.Sleep(300 * time.Millisecond)
	load.Stop()
	// The last process's stop (SIGTERM, Run's Shutdown) sends 1001 too.
	syscall.Kill(pid, syscall.SIGTERM)
	deploytest.WaitGone(t, pid)
	requireGoingAway(t, socks, pid)

	servedBy := load.ServedBy()
	t.Logf("%d hand-offs: %d GETs over %d processes, %d failed; %d WebSockets per process closed with 1001",
		handoffRounds, load.OK.Load()+load.Failed.Load(), len(servedBy), load.Failed.Load(), handoffSockets)
	if load.Failed.Load() != 0 {
		t.Errorf("%d GETs failed across the hand-offs; first errors: %q", load.Failed.Load(), load.Errors())
	}
	if len(servedBy) < handoffRounds+1 || load.OK.Load() < 100 {
		t.Errorf("too little load to prove anything: %d GETs served by processes %v, want %d processes",
			load.OK.Load(), servedBy, handoffRounds+1)
	}
}

// handoffSock is one WebSocket of the test; closed receives the error its
// reads ended with.
type handoffSock struct {
	c      *gws.Conn
	closed chan error
}

// openSockets opens n WebSockets on /ws, checks that process pid
// greets each and echoes a message, and keeps reading each until it
// closes.
func openSockets(t *testing.T, addr string, pid, n int) []handoffSock {
	t.Helper()
	d := gws.Dialer{HandshakeTimeout: 5 * time.Second}
	socks := make([]handoffSock, 0, n)
	for i := range n {
		c, _, err := d.Dial("ws://"+addr+"/ws", nil)
		if err != nil {
			t.Fatalf("WebSocket %d on process %d: %v", i, pid, err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetReadDeadline(time.Now().Add(time.Minute))
		_, greeting, err := c.ReadMessage()
		if err != nil || string(greeting) != strconv.Itoa(pid) {
			t.Fatalf("WebSocket %d: greeted by %q (%v), want process %d", i, greeting, err, pid)
		}
		msg := []byte("echo " + strconv.Itoa(i))
		if err := c.WriteMessage(gws.TextMessage, msg); err != nil {
			t.Fatal(err)
		}
		if _, back, err := c.ReadMessage(); err != nil || string(back) != string(msg) {
			t.Fatalf("WebSocket %d echoed %q (%v), want %q", i, back, err, msg)
		}
		s := handoffSock{c: c, closed: make(chan error, 1)}
		go func() {
			for {
				if _, _, err := c.ReadMessage(); err != nil {
					s.closed <- err // gorilla has answered a close frame by now
					return
				}
			}
		}()
		socks = append(socks, s)
	}
	return socks
}

// requireGoingAway requires every socket of process pid, which has
// exited, to have read a close frame with 1001.
func requireGoingAway(t *testing.T, socks []handoffSock, pid int) {
	t.Helper()
	for i, s := range socks {
		var err error
		select {
		case err = <-s.closed:
		case <-time.After(5 * time.Second):
			err = errors.New("still open after its process exited")
		}
		var ce *gws.CloseError
		if !errors.As(err, &ce) || ce.Code != gws.CloseGoingAway {
			t.Errorf("WebSocket %d of process %d ended with %v, want close code 1001", i, pid, err)
		}
	}
}
