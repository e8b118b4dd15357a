package kittest

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The helpers of the deploy tests, which run a built server as a real
// process and replace it (restart, hand-off, socket activation): the
// process writes its PID to a file once it serves.

// ReplaceBinary puts a new copy of built at bin (a new file renamed over
// the old one, as a deploy does): the next process started from bin runs
// the new file, the running one keeps the old.
func ReplaceBinary(t testing.TB, built, bin string) {
	t.Helper()
	b, err := os.ReadFile(built)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin+".new", b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(bin+".new", bin); err != nil {
		t.Fatal(err)
	}
}

// ReadPID returns the PID written in the file at path.
func ReadPID(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// WaitNewPID waits (20 s at most, polling every 5 ms) until the PID file
// at path names a process other than old, and returns it.
func WaitNewPID(t testing.TB, path string, old int) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if pid, err := ReadPID(path); err == nil && pid != old {
			return pid
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no new process wrote %s within 20s (old pid %d)", path, old)
	return 0
}

// WaitGone waits (20 s at most) until pid has exited: gone from /proc, or
// a zombie (a handed-off generation's parent is no longer the test).
func WaitGone(t testing.TB, pid int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return
		}
		if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) > 0 && f[0] == "Z" {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("process %d still running 20s after it was replaced", pid)
}
