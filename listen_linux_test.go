//go:build linux

package fx

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInheritedSocketsOneRule: socket activation and the hand-off read
// inherited descriptors with one rule. Given a listening socket (3), a
// file that is not a socket (4) and another listening socket (5), each
// source refuses with an error naming descriptor 4, having closed 3 and
// its listener, and leaves 5 untouched: the description does not match
// what was passed, so 5 is not known to be the process's. (The hand-off
// used to go on past 4, taking and closing 5.)
func TestInheritedSocketsOneRule(t *testing.T) {
	if os.Getenv("FX_SLOW_TESTS") == "" {
		t.Skip("slow test: FX_SLOW_TESTS=1 runs it (.ci/run sets it)")
	}
	files := make([]*os.File, 3)
	for i := range files {
		if i == 1 {
			f, err := os.Open(os.DevNull)
			if err != nil {
				t.Fatal(err)
			}
			files[i] = f
			continue
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		f, err := ln.(*net.TCPListener).File()
		ln.Close()
		if err != nil {
			t.Fatal(err)
		}
		files[i] = f
	}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for _, source := range []string{"activation", "handoff"} {
		t.Run(source, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestInheritedSocketsHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), "FX_INHERIT_HELPER="+source)
			cmd.ExtraFiles = files
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("helper: %v\n%s", err, out)
			}
			var errLine string
			var before, after int
			var open5 bool
			for _, l := range strings.Split(string(out), "\n") {
				switch {
				case strings.HasPrefix(l, "err: "):
					errLine = l
				case strings.HasPrefix(l, "fds: "):
					fmt.Sscanf(l, "fds: %d %d %t", &before, &after, &open5)
				}
			}
			if !strings.Contains(errLine, "descriptor 4 ") {
				t.Errorf("%s: error %q, want one naming descriptor 4\n%s", source, errLine, out)
			}
			if !open5 {
				t.Errorf("%s: descriptor 5 was taken past the bad descriptor 4", source)
			}
			if before-after != 2 {
				t.Errorf("%s: %d descriptors open before, %d after; want 3 and 4 closed, and no listener left open", source, before, after)
			}
		})
	}
}

// TestInheritedSocketsHelper is not a test: it is the process
// TestInheritedSocketsOneRule starts with descriptors 3 to 5 and
// FX_INHERIT_HELPER naming the source that reads them.
func TestInheritedSocketsHelper(t *testing.T) {
	source := os.Getenv("FX_INHERIT_HELPER")
	if source == "" {
		t.Skip("helper process for TestInheritedSocketsOneRule")
	}
	// The network poller's own descriptors, opened on first use, must not
	// count as the reader's.
	if ln, err := net.Listen("tcp", "127.0.0.1:0"); err == nil {
		ln.Close()
	}
	before := openDescriptors(t)
	var err error
	switch source {
	case "activation":
		os.Setenv(envListenPID, strconv.Itoa(os.Getpid()))
		os.Setenv(envListenFDs, "3")
		_, err = readActivation()
	case "handoff":
		os.Setenv(envHandoff, strconv.Itoa(os.Getppid())+" a b c")
		_, err = inherited("a")
	}
	after := openDescriptors(t)
	_, _, errno := syscall.Syscall(syscall.SYS_FCNTL, 5, syscall.F_GETFD, 0)
	fmt.Printf("err: %v\nfds: %d %d %t\n", err, before, after, errno == 0)
}

// openDescriptors counts the process's open descriptors.
func openDescriptors(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// TestHandOffReportsReadyOnce: the new process of a hand-off reports
// ready (its PID on the readiness pipe, once) whichever entry point takes
// the passed socket, Listen or Run, and it then answers on that socket.
// The report is made in one place (Serve); a report missing from an entry
// point leaves the old process waiting until its HandOff times out.
func TestHandOffReportsReadyOnce(t *testing.T) {
	if os.Getenv("FX_SLOW_TESTS") == "" {
		t.Skip("slow test: FX_SLOW_TESTS=1 runs it (.ci/run sets it)")
	}
	for _, entry := range []string{"Listen", "Run"} {
		t.Run(entry, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			sock, err := ln.(*net.TCPListener).File()
			ln.Close()
			if err != nil {
				t.Fatal(err)
			}
			defer sock.Close()
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer pr.Close()
			cmd := exec.Command(os.Args[0], "-test.run=^TestHandOffReadyHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), "FX_READY_HELPER="+entry,
				envHandoff+"="+strconv.Itoa(os.Getpid())+" passed")
			cmd.ExtraFiles = []*os.File{sock, pw} // 3: the socket, 4: the readiness pipe
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pw.Close()
			defer func() {
				cmd.Process.Signal(syscall.SIGTERM)
				cmd.Wait()
			}()
			pr.SetReadDeadline(time.Now().Add(10 * time.Second))
			var pid int
			if _, err := fmt.Fscanln(pr, &pid); err != nil || pid != cmd.Process.Pid {
				t.Fatalf("%s: readiness report %d (%v), want the new process's PID %d", entry, pid, err, cmd.Process.Pid)
			}
			if rest, err := io.ReadAll(pr); err != nil || len(rest) > 0 {
				t.Errorf("%s: after the report the pipe gave %q (%v), want its end", entry, rest, err)
			}
			c, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(5 * time.Second))
			fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
			resp, _ := io.ReadAll(c)
			if !strings.HasPrefix(string(resp), "HTTP/1.1 200") || !strings.HasSuffix(string(resp), strconv.Itoa(pid)) {
				t.Errorf("%s: the passed socket answered %q, want 200 from %d", entry, resp, pid)
			}
		})
	}
}

// TestHandOffReadyHelper is not a test: it is the new process
// TestHandOffReportsReadyOnce starts, serving the socket passed for the
// key "passed" with the entry point FX_READY_HELPER names.
func TestHandOffReadyHelper(t *testing.T) {
	entry := os.Getenv("FX_READY_HELPER")
	if entry == "" {
		t.Skip("helper process for TestHandOffReportsReadyOnce")
	}
	app := New()
	app.Get("/", func(c *Ctx) error {
		return c.Send(200, "text/plain", []byte(strconv.Itoa(os.Getpid())))
	})
	var err error
	switch entry {
	case "Listen":
		err = app.Listen("passed")
	case "Run":
		err = app.Run(context.Background(), "passed")
	}
	if err != nil {
		t.Fatal(err)
	}
}
