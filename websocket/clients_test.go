package websocket_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/websocket"
)

// Real clients other than Go's: Node's ws library and headless Chromium's
// WebSocket, against the same routes. Without node (or Chromium) the test
// is skipped, except under CI (CI set), where it fails: CI must run it.

// wsVersion is the pinned version of Node's ws library.
const wsVersion = "8.18.3"

// clientApp is the App the real clients talk to: an echo that ends with
// an *fx.Error on "who?", and a page for the browser.
func clientApp(t *testing.T, report chan<- string) *served {
	return serve(t, func(app *fx.App) {
		app.Get("/ws", websocket.New(echoUntil("who?", fx.NewCatalogError(fx.ErrorCodes.Unauthenticated, "who are you"))))
		app.Get("/", func(c *fx.Ctx) error {
			c.RequestCtx().SetContentType("text/html; charset=utf-8")
			c.RequestCtx().SetBodyString(browserPage)
			return nil
		})
		app.Post("/report", func(c *fx.Ctx) error {
			report <- string(c.Body())
			return nil
		})
	})
}

// need finds a program or skips (fails under CI).
func need(t *testing.T, names ...string) string {
	t.Helper()
	for _, n := range names {
		if n == "" {
			continue
		}
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	msg := "none of " + strings.Join(names, ", ") + " on PATH"
	if os.Getenv("CI") != "" {
		t.Fatal(msg + "; CI requires this test")
	}
	t.Skip(msg)
	return ""
}

// nodeWS returns a directory whose node_modules holds ws at wsVersion,
// installed with npm once into the user's cache directory.
func nodeWS(t *testing.T) string {
	t.Helper()
	need(t, "node")
	npm := need(t, "npm")
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "fx-websocket-test", "ws-"+wsVersion)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "ws", "package.json")); err == nil {
		return dir
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "install", "--prefix", dir, "--no-audit", "--no-fund", "--silent", "ws@"+wsVersion)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install ws@%s: %v\n%s", wsVersion, err, out)
	}
	return dir
}

// nodeScript connects with ws: an echo, the close code of an *fx.Error,
// and a handshake from a foreign Origin.
const nodeScript = `
const WebSocket = require("ws");
const base = process.argv[2];
const out = {};
const ws = new WebSocket(base + "/ws");
ws.on("open", () => ws.send("hello"));
ws.on("message", (data) => { out.echo = data.toString(); ws.send("who?"); });
ws.on("close", (code, reason) => {
  out.code = code; out.reason = reason.toString();
  const evil = new WebSocket(base + "/ws", { origin: "https://evil.example" });
  evil.on("unexpected-response", (req, res) => {
    let body = "";
    res.on("data", (c) => body += c);
    res.on("end", () => { out.foreign = res.statusCode; out.foreignBody = body; console.log(JSON.stringify(out)); process.exit(0); });
  });
  evil.on("open", () => { out.foreign = 101; console.log(JSON.stringify(out)); process.exit(0); });
  evil.on("error", () => {});
});
ws.on("error", (e) => { console.log(JSON.stringify({error: String(e)})); process.exit(1); });
`

func TestNodeClient(t *testing.T) {
	dir := nodeWS(t)
	s := clientApp(t, make(chan string, 1))
	script := filepath.Join(dir, "client.js")
	if err := os.WriteFile(script, []byte(nodeScript), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "node", script, "ws://"+s.addr).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var got struct {
		Echo        string
		Code        int
		Reason      string
		Foreign     int
		ForeignBody string
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &got); err != nil {
		t.Fatalf("node printed %s", out)
	}
	if got.Echo != "hello" || got.Code != 4401 || got.Reason != "FX_UNAUTHENTICATED" {
		t.Errorf("node ws: %+v; want the echo, then close 4401 FX_UNAUTHENTICATED", got)
	}
	if got.Foreign != 403 || !strings.Contains(got.ForeignBody, `"code":"FX_FORBIDDEN"`) {
		t.Errorf("node ws from a foreign Origin: %d %s; want the 403 envelope", got.Foreign, got.ForeignBody)
	}
}

// browserPage opens a WebSocket from the page, and reports the echo and
// the close code and reason the browser read back to /report.
const browserPage = `<!doctype html><meta charset="utf-8"><title>ws</title>
<script>
const out = {};
const ws = new WebSocket("ws://" + location.host + "/ws");
ws.onopen = () => ws.send("hello");
ws.onmessage = (e) => { out.echo = e.data; ws.send("who?"); };
ws.onclose = (e) => {
  out.code = e.code; out.reason = e.reason; out.clean = e.wasClean;
  fetch("/report", {method: "POST", body: JSON.stringify(out)});
};
</script>`

func TestChromiumClient(t *testing.T) {
	bin := need(t, os.Getenv("CHROMIUM"), "chromium", "chromium-browser")
	report := make(chan string, 1)
	s := clientApp(t, report)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var console bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--user-data-dir="+t.TempDir(), "--enable-logging=stderr", "--v=0", "http://"+s.addr+"/")
	cmd.Stdout, cmd.Stderr = &console, &console
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	select {
	case r := <-report:
		var got struct {
			Echo   string
			Code   int
			Reason string
			Clean  bool
		}
		if err := json.Unmarshal([]byte(r), &got); err != nil {
			t.Fatalf("report %s", r)
		}
		if got.Echo != "hello" || got.Code != 4401 || got.Reason != "FX_UNAUTHENTICATED" || !got.Clean {
			t.Errorf("Chromium: %+v; want the echo, then a clean close 4401 FX_UNAUTHENTICATED", got)
		}
	case <-ctx.Done():
		t.Fatalf("Chromium never reported\n%s", console.String())
	}
}
