package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fxhq/fx/middleware"
)

// chromium returns the path of a headless-capable Chromium: $CHROMIUM, or
// chromium / chromium-browser on PATH. Without one the test is skipped,
// except under CI (CI set), where it fails: CI must run it (.ci/run
// installs the Debian package chromium).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("CHROMIUM"), "chromium", "chromium-browser"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const msg = "no Chromium (set CHROMIUM, or install the Debian package chromium: apt-get install -y chromium)"
	if os.Getenv("CI") != "" {
		t.Fatal(msg + "; CI requires this test")
	}
	t.Skip(msg)
	return ""
}

// TestDocsPageRendersUnderSecurityHeaders: the documentation page of an App
// behind middleware.SecurityHeaders with its defaults (whose policy lets a
// page load nothing) renders in a real browser: headless Chromium loads
// /docs from a server on 127.0.0.1, and every operation's summary is in
// the rendered DOM. The browser's console must show no script or style
// the page's policy blocked; the only block allowed is an image from
// another origin (Redoc's footer logo, on a CDN: the page stays offline
// and Redoc hides the image when it fails).
func TestDocsPageRendersUnderSecurityHeaders(t *testing.T) {
	bin := chromium(t)
	app := exampleApp(t)
	app.Use(middleware.SecurityHeaders(middleware.SecurityHeadersConfig{}))

	// The summaries Redoc must render, from the served document.
	resp, err := app.Test(httptest.NewRequest("GET", "/openapi.json", nil))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]struct{ Summary string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	var summaries []string
	for _, item := range doc.Paths {
		for _, op := range item {
			summaries = append(summaries, op.Summary)
		}
	}
	if len(summaries) < 9 {
		t.Fatalf("%d operations in the document", len(summaries))
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Serve(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var dom, console bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--user-data-dir="+t.TempDir(), "--virtual-time-budget=15000",
		"--enable-logging=stderr", "--v=0", "--dump-dom", "http://"+ln.Addr().String()+"/docs")
	cmd.Stdout, cmd.Stderr = &dom, &console
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, tail(console.String()))
	}

	page := html.UnescapeString(dom.String())
	for _, s := range summaries {
		if !strings.Contains(page, s) {
			t.Errorf("operation %q is not in the rendered page", s)
		}
	}
	for _, line := range strings.Split(console.String(), "\n") {
		if !strings.Contains(line, "CONSOLE") {
			continue
		}
		if strings.Contains(line, "Content Security Policy") && !strings.Contains(line, "Loading the image 'https://") ||
			strings.Contains(line, "Uncaught") {
			t.Errorf("browser console: %s", line)
		}
	}
	if t.Failed() {
		t.Logf("rendered DOM (%d bytes), start:\n%.2000s", dom.Len(), dom.String())
	}
}

// tail is the end of a long log.
func tail(s string) string {
	if len(s) > 4000 {
		return "..." + s[len(s)-4000:]
	}
	return s
}
