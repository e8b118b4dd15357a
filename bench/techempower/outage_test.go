package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fxhq/fx/bench/techempower/internal/pgtest"
)

// TestOutage stops PostgreSQL under a bounded load (8 keep-alive clients
// on 127.0.0.1 cycling through the four database routes) and starts it
// again, with the same service running throughout:
//   - before the stop, every request is answered 200;
//   - from the stop on, every request is answered, within the route's
//     deadline, either 200 (a request that finished first) or the 503
//     FX_SERVICE_UNAVAILABLE envelope with Retry-After; nothing else, no
//     transport error, no hang; and 503s are seen;
//   - after the restart the service recovers by itself (the pool opens
//     new connections, preparing its statements again): within 10 s every
//     request is 200 again, and stays so for a second.
func TestOutage(t *testing.T) {
	if os.Getenv("FX_SLOW_TESTS") == "" {
		t.Skip("slow test: FX_SLOW_TESTS=1 runs it (.ci/run sets it)")
	}
	const deadline = 5 * time.Second // generous: a loaded CI machine must not turn a healthy request into a 504
	pg := pgtest.Start(t)
	e := startEntry(t, pg, "", deadline)
	paths := []string{"/db", "/queries?queries=5", "/fortunes", "/updates?queries=5"}

	type outcome struct {
		at     time.Time
		path   string
		status int
		took   time.Duration
		bad    string // why the answer is not acceptable in any phase, if it is not
	}
	var (
		mu       sync.Mutex
		outcomes []outcome
		stop     atomic.Bool
		wg       sync.WaitGroup
	)
	loadStart := time.Now()
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; !stop.Load(); i++ {
				path := paths[i%len(paths)]
				start := time.Now()
				o := outcome{at: start, path: path}
				resp, err := hc.Get(e.base + path)
				if err != nil {
					o.bad = "transport error: " + err.Error()
				} else {
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					o.status = resp.StatusCode
					o.bad = judge(resp, body)
				}
				o.took = time.Since(start)
				mu.Lock()
				outcomes = append(outcomes, o)
				mu.Unlock()
			}
		}()
	}
	snapshot := func() int { mu.Lock(); defer mu.Unlock(); return len(outcomes) }

	time.Sleep(time.Second)
	healthy := snapshot()
	stopAt := time.Now()
	pg.Stop()
	time.Sleep(2 * time.Second)
	restartAt := time.Now()
	pg.Restart()
	restarted := time.Now()
	t.Logf("PostgreSQL stopped %v after the load began; restarted in %v", stopAt.Sub(loadStart).Round(time.Millisecond), restarted.Sub(restartAt).Round(time.Millisecond))

	// Wait for a second of 200s only, at most 10 s.
	var recoveredAt time.Time
	for time.Since(restarted) < 10*time.Second {
		time.Sleep(100 * time.Millisecond)
		mu.Lock()
		last := time.Time{}
		for _, o := range outcomes {
			if o.at.After(restarted) && o.status != 200 {
				last = o.at
			}
		}
		mu.Unlock()
		if last.IsZero() {
			last = restarted
		}
		if time.Since(last) > time.Second {
			recoveredAt = last
			break
		}
	}
	stop.Store(true)
	wg.Wait()

	var ok, unavailable int
	for i, o := range outcomes {
		switch {
		case o.bad != "":
			t.Errorf("%s at +%v: %s", o.path, o.at.Sub(stopAt).Round(time.Millisecond), o.bad)
		case i < healthy && o.status != 200:
			t.Errorf("%s before the stop: %d", o.path, o.status)
		case o.took > deadline+500*time.Millisecond:
			t.Errorf("%s at +%v answered %d after %v, past its deadline of %v", o.path, o.at.Sub(stopAt).Round(time.Millisecond), o.status, o.took, deadline)
		case o.status == 503:
			unavailable++
		default:
			ok++
		}
	}
	t.Logf("%d requests: %d answered 200, %d the 503 envelope", len(outcomes), ok, unavailable)
	if unavailable == 0 {
		t.Error("no request saw the database down: the outage was not observed")
	}
	if recoveredAt.IsZero() {
		t.Fatal("the service did not recover within 10 s of PostgreSQL's restart")
	}
	t.Logf("the last answer other than 200 came %v after the restart", recoveredAt.Sub(restarted).Round(time.Millisecond))
}

// judge returns why an answer is acceptable in no phase of an outage, or
// "": a 200, or a 503 FX_SERVICE_UNAVAILABLE envelope with Retry-After.
func judge(resp *http.Response, body []byte) string {
	switch resp.StatusCode {
	case 200:
		return ""
	case 503:
		var env struct {
			Error struct{ Code string } `json:"error"`
		}
		if err := json.Unmarshal(body, &env); err != nil || env.Error.Code != "FX_SERVICE_UNAVAILABLE" {
			return "503 without its envelope: " + string(body)
		}
		if resp.Header.Get("Retry-After") == "" {
			return "503 without Retry-After"
		}
		return ""
	}
	return resp.Status + ": " + string(body)
}
