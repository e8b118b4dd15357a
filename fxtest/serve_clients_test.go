package fxtest_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/internal/kittest"
)

// ServeForClients serves the App to another process's tests: it says
// where, runs each line's command before answering "ok LINE", and its
// fault switch turns any request into the 500 every route declares.
func TestServeForClients(t *testing.T) {
	t.Setenv("FX_SERVE_FOR_CLIENTS", "1")
	app := quietApp()
	app.Get("/ping", func(c *fx.Ctx) error { return c.String(200, "pong") })

	var out bytes.Buffer
	var ran []string
	get := func(fault bool) (int, http.Header, []byte) {
		addr, _ := strings.CutPrefix(strings.SplitN(out.String(), "\n", 2)[0], "listening ")
		req, _ := http.NewRequest("GET", "http://"+addr+"/ping", nil)
		if fault {
			req.Header.Set(fxtest.FaultHeader, "on")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, body
	}
	fxtest.ServeForClients(t, app, strings.NewReader("plain\nfault\n"), &out, map[string]func(){
		"plain": func() {
			ran = append(ran, "plain")
			if status, _, body := get(false); status != 200 || string(body) != "pong" {
				t.Errorf("GET /ping: %d %q, want 200 pong", status, body)
			}
		},
		"fault": func() {
			ran = append(ran, "fault")
			status, header, body := get(true)
			kittest.CheckEnvelope(t, status, header, body, "FX_INTERNAL_ERROR")
			if status != 500 {
				t.Errorf("GET /ping with %s: status %d, want 500", fxtest.FaultHeader, status)
			}
		},
	})
	if strings.Join(ran, ",") != "plain,fault" {
		t.Errorf("commands ran: %v, want plain then fault", ran)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "listening 127.0.0.1:") || lines[1] != "ok plain" || lines[2] != "ok fault" {
		t.Errorf("output %q, want listening 127.0.0.1:PORT, ok plain, ok fault", out.String())
	}

	// A line no command answers fails the test.
	var rec kittest.RecordTB
	rec.Run(func(t testing.TB) {
		fxtest.ServeForClients(t, quietApp(), strings.NewReader("unknown\n"), io.Discard, nil)
	})
	rec.End()
	if errs := rec.Errors(); len(errs) != 1 || !strings.Contains(errs[0], `unknown line "unknown"`) {
		t.Errorf("an unknown line reported %q, want one failure naming it", errs)
	}
}

// Without FX_SERVE_FOR_CLIENTS, ServeForClients skips the test: plain
// go test does not wait for lines no one sends.
func TestServeForClientsSkipsUnlessAsked(t *testing.T) {
	t.Setenv("FX_SERVE_FOR_CLIENTS", "")
	defer func() {
		if !t.Skipped() {
			t.Error("ServeForClients did not skip the test")
		}
	}()
	fxtest.ServeForClients(t, quietApp(), strings.NewReader(""), io.Discard, nil)
	t.Error("ServeForClients returned without FX_SERVE_FOR_CLIENTS set")
}
