#!/usr/bin/env bash
# Load test for fx: builds and starts examples/loadtarget on 127.0.0.1, drives
# it with wrk over a mix of success, *fx.Error, panic, 404 and validation
# routes (scripts/load.lua), then checks:
#   - every response had the status its route promises (counts by status,
#     each within the in-flight tolerance of its share of the mix), no body
#     mismatched its status, no socket errors;
#   - memory and goroutines return to a steady level: RSS and goroutine
#     count are sampled after warm-up, after each of two load rounds and
#     after idling; the second round must not grow RSS beyond the first
#     (+25% +16 MiB slack) and goroutines must return to the warm-up level.
# Everything it starts is stopped on exit (trap).
#
#   scripts/load.sh                 # 2 rounds of 15s, 2 threads, 64 connections
#   DURATION=30s CONNS=128 scripts/load.sh
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-15s}
THREADS=${THREADS:-2}
CONNS=${CONNS:-64}
IDLE=${IDLE:-5}

command -v wrk >/dev/null || { echo "wrk not found (apt-get install -y wrk)" >&2; exit 2; }

work=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

go build -o "$work/loadtarget" ./examples/loadtarget
ADDR=127.0.0.1:0 "$work/loadtarget" >"$work/out" 2>"$work/err" &
pid=$!
for _ in $(seq 100); do
  grep -q 'listening on' "$work/out" 2>/dev/null && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/err" >&2; exit 1; }
  sleep 0.1
done
url=$(sed -n 's/^listening on //p' "$work/out")
[ -n "$url" ] || { echo "server did not start" >&2; exit 1; }
case "$url" in http://127.0.0.1:*) ;; *) echo "refusing non-loopback $url" >&2; exit 1;; esac

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$pid/status"; }
stat() { curl -fsS "$url/_stats" | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }
sample() { printf '%-22s rss=%6d KiB  goroutines=%4s  heap_inuse=%6d KiB\n' "$1" "$(rss_kib)" "$(stat goroutines)" "$(( $(stat heap_inuse) / 1024 ))"; }

fail=0
round() { # $1 = name
  wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" --latency -s scripts/load.lua "$url" >"$work/$1.txt" 2>"$work/$1.err" || { cat "$work/$1.err" >&2; exit 1; }
  echo "== $1: wrk -t$THREADS -c$CONNS -d$DURATION -s scripts/load.lua"
  grep -E '^(status|mismatch|requests|socket_errors|p50_us|p99_us)|Requests/sec' "$work/$1.txt"
  local total; total=$(awk '/^requests /{print $2}' "$work/$1.txt")
  local tol=$(( CONNS + 7 * THREADS ))
  check() { # status share_numerator (of 7)
    local n; n=$(awk -v s="$1" '$1=="status" && $2==s {print $3}' "$work/$2.txt")
    local want=$(( total * $3 / 7 ))
    local d=$(( n > want ? n - want : want - n ))
    if [ "$d" -gt "$tol" ]; then echo "FAIL: status $1: $n responses, expected $want +- $tol"; fail=1; fi
  }
  check 200 "$1" 2; check 201 "$1" 1; check 404 "$1" 1; check 409 "$1" 1; check 422 "$1" 1; check 500 "$1" 1
  for k in 'status other' mismatch socket_errors; do
    local v; v=$(awk -v k="$k" 'index($0, k" ")==1 {print $NF}' "$work/$1.txt")
    if [ "$v" != 0 ]; then echo "FAIL: $k = $v"; cat "$work/$1.err"; fail=1; fi
  done
}

wrk -t"$THREADS" -c"$CONNS" -d2s -s scripts/load.lua "$url" >/dev/null
sleep 1
sample "after warm-up"; g0=$(stat goroutines)
round round1
sample "after round 1"; sleep "$IDLE"; sample "after ${IDLE}s idle"; rss1=$(rss_kib)
round round2
sample "after round 2"; sleep "$IDLE"; sample "after ${IDLE}s idle"; rss2=$(rss_kib); g2=$(stat goroutines)

limit=$(( rss1 * 125 / 100 + 16384 ))
if [ "$rss2" -gt "$limit" ]; then echo "FAIL: RSS grew from $rss1 to $rss2 KiB between rounds (limit $limit)"; fail=1; fi
# Keep-alive connections from wrk are closed when it exits; the server's
# worker goroutines are reaped after fasthttp's MaxIdleWorkerDuration (10s),
# so compare against the warm-up level with that slack.
if [ "$g2" -gt $(( g0 + 8 )) ]; then
  sleep 11; g2=$(stat goroutines)
  if [ "$g2" -gt $(( g0 + 8 )) ]; then echo "FAIL: goroutines $g0 -> $g2"; fail=1; fi
fi
kill -0 "$pid" || { echo "FAIL: server died"; cat "$work/err"; fail=1; }
[ -s "$work/err" ] && { echo "server stderr:"; head -20 "$work/err"; }
if [ "$fail" = 0 ]; then echo "load: OK"; else echo "load: FAILED"; exit 1; fi
