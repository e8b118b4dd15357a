#!/usr/bin/env bash
# Scale test of the bench service over loopback: throughput, tail latency
# and memory as the number of keep-alive connections grows. For each
# connection count (CONNS) and each implementation (cmd/server) in turn, a
# fresh server is pinned to one core with taskset, warmed up, and driven
# by wrk pinned to another core for a bounded time on GET /hello; the
# frameworks are interleaved (each round, each connection count, in a
# rotated order) over several rounds. Prints, per connection count and
# framework, the medians over the rounds of: req/s, p50, p99 and p99.9
# latency (wrk's own histogram, read by a Lua done() hook), the server's
# peak RSS (VmHWM after the run), and RSS per connection ((peak RSS - RSS
# after warm-up) / connections; at 50 connections this is dominated by
# buffers that do not scale with connections, so read it at 4,000 and
# 10,000); and the medians of the round-by-round ratios of req/s to raw
# fasthttp and to Fiber v3, and of p99 to Fiber v3 (one round's runs of a
# connection count are back to back, so drift moves both sides together).
#
# Every framework runs at its own defaults: fx with its safe defaults
# (ReadTimeout 10s, WriteTimeout 15s, IdleTimeout 60s, the connection
# limit and its 503), raw fasthttp and Fiber with none of these. fx clamps
# its default Config.Concurrency below RLIMIT_NOFILE ((N - 64) * 3/4), so
# the script raises the soft descriptor limit (to the hard limit, or
# NOFILE) and refuses to run when the clamp would refuse connections the
# test opens.
#
# Usage: bench/scale.sh            (from anywhere in the repository)
# Environment (defaults):
#   DURATION=5      seconds of wrk per run
#   ROUNDS=3        rounds (≥ 3)
#   CONNS="50 1000 4000 10000"   connection counts
#   FRAMEWORKS="raw-fasthttp fx fiber-v3"   (any of cmd/server's -fw names)
#   WRK_THREADS=1   wrk threads (lowered to the connection count if above it)
#   TIMEOUT=10      wrk's per-request timeout in seconds (a slower response
#                   counts as a timeout error, not as a latency sample)
#   SERVER_CPU=0 WRK_CPU=1   cores for the server and for wrk
#   PORT=18090      the server listens on 127.0.0.1:PORT
#   NOFILE=         soft descriptor limit to set (default: the hard limit)
#   OUT=            also append the raw measurements (tsv) to this file
#   WARMUP=steady   steady: before the measured run, a 2 s run at the same
#                   connection count (its connections closed), so the
#                   measured run sees a server that has served that many
#                   connections once (worker goroutines parked, stacks
#                   grown, heap sized); cold: only the 50-connection
#                   warm-up, so the measured run's tail includes the
#                   first burst of that many new connections on a fresh
#                   process. Idle RSS is read before this warm-up either way.
# Only 127.0.0.1 is ever targeted. Every process the script starts (server,
# wrk) is stopped on exit, including on Ctrl-C.
#
# Numbers are only comparable within one run on a quiet machine: compare
# the frameworks' columns against each other (and against raw fasthttp),
# not against another machine's or another run's.
#
# Attributing fx's cost: FRAMEWORKS="raw-fasthttp raw-timeouts fx
# fx-notimeouts fx-bare fiber-v3" CONNS=1000 (bench/variants.go: fx with
# its timeouts off, fx with its timeouts and connection limit off, raw
# fasthttp with fasthttp's own timeouts on). The memory an idle
# connection holds: go run ./cmd/idle (-fw "fx fx-header4k fiber-v3"); the
# instructions a connection and a request cost, counted under valgrind
# where the machine's load does not move them: go run ./cmd/conncount. To
# profile a server under load, run it with FX_BENCH_PPROF=127.0.0.1:6060
# (cmd/server/pprof.go; add FX_BENCH_PPROF_CPU_ONLY=1 for CPU profiles at
# full speed).
#
# Where a request's server time goes, from a 5 s CPU profile of each server
# at 1,000 connections on a quiet 2-core machine (kvm-clock): all three
# spend ~15 µs of server CPU per request (fx 15.5, raw fasthttp 15.3,
# Fiber v3 15.5), ~70% of it in the read and write system calls. fx's
# own share, per request:
#   - the handler path (one-path step, router, Ctx pool, chain, JSON): ~4%
#     of the profile, ~35 ns more than raw fasthttp's switch
#     (BenchmarkService/hello in bench_test.go).
#   - timeouts: fasthttp's own Read/Write/IdleTimeout move a connection's
#     deadlines three times per keep-alive request (idle, read at the first
#     byte, write), each after a time.Now (~55 ns here): ~0.52 µs per
#     request on this quiet machine, ~2 µs on a loaded one. fx leaves them
#     at zero and enforces Config's timeouts per connection phase
#     (internal/conn/deadline.go): one monotonic clock read per phase and a deadline
#     armed only when it moves earlier, ~0.14 µs (root package:
#     go test -run '^$' -bench Phases .), ~1% of the request.
#   - framing guard (internal/conn/framing.go): one scan of the raw header block, ~80 ns
#     on an 11-line API-client header (BenchmarkFraming), less on wrk's two.
#   - connection limit: one atomic add per accept and per close, and a
#     one-branch Read wrapper; per connection, not per request.
#   - worker pool: a keep-alive connection holds one fasthttp worker
#     goroutine for its life; closed connections' workers stay parked for
#     fasthttp's MaxIdleWorkerDuration (10 s) before they exit.
#   - a worker's stack: a new worker (or one whose parked stack a
#     collection halved) grows to 8 KiB for go-json's encoder. fx grows it
#     at the connection's first read (internal/conn/stack.go), where the
#     copy is cheap: ~55,000 instructions per new connection against raw
#     fasthttp's ~175,000, which grows it inside the encoder (Fiber v3,
#     encoding with encoding/json on a 4 KiB stack: ~35,000; cmd/conncount).
#   - GC: GET /hello allocates nothing in fx (0 allocs/op); no GC frames in
#     the profile.
#   - memory: ~21 KiB per keep-alive connection, the same as raw fasthttp
#     (TestIdleKeepAliveConnections: all of it returns when they close).
#     Fiber v3 holds ~17 KiB. Not the 8 KiB header buffer (an fx build
#     with a 4 KiB HeaderLimit measured the same 21 KiB): the connection's
#     goroutine stack. go-json's encoder has deep frames (a fresh goroutine
#     that encodes one small struct with it ends on a 4 KiB stack, with
#     encoding/json on 2 KiB), and raw fasthttp and fx encode with go-json;
#     Fiber v3 uses encoding/json.
set -euo pipefail

DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-3}
CONNS=${CONNS:-"50 1000 4000 10000"}
FRAMEWORKS=${FRAMEWORKS:-"raw-fasthttp fx fiber-v3"}
WRK_THREADS=${WRK_THREADS:-1}
TIMEOUT=${TIMEOUT:-10}
WARMUP=${WARMUP:-steady}
case "$WARMUP" in steady|cold) ;; *) echo "scale.sh: WARMUP must be steady or cold" >&2; exit 2 ;; esac
SERVER_CPU=${SERVER_CPU:-0}
WRK_CPU=${WRK_CPU:-1}
PORT=${PORT:-18090}
NOFILE=${NOFILE:-}
OUT=${OUT:-}
HOST=127.0.0.1

NAME=scale.sh
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

[ "$ROUNDS" -ge 3 ] || die "ROUNDS must be at least 3"
require_tools

# Descriptors: the server holds one per connection, wrk one per connection.
# fx's default connection limit is (soft limit - 64) * 3/4, so the soft
# limit must be at least maxconns * 4/3 + 64 (plus headroom) for fx to serve
# every connection at its defaults rather than answer some with its 503.
maxconns=0
for c in $CONNS; do [ "$c" -gt "$maxconns" ] && maxconns=$c; done
need=$((maxconns * 4 / 3 + 64 + 256))
hard=$(ulimit -Hn)
if [ -z "$NOFILE" ]; then
  if [ "$hard" = unlimited ]; then NOFILE=1048576; else NOFILE=$hard; fi
fi
[ "$NOFILE" -ge "$need" ] ||
  die "the descriptor limit ($NOFILE, hard $hard) is below $need, needed for $maxconns connections; raise the hard limit (ulimit -Hn) or lower CONNS"
ulimit -n "$NOFILE" || die "could not raise the soft descriptor limit to $NOFILE"
if [ "$(cat /proc/sys/net/core/somaxconn 2>/dev/null || echo 4096)" -lt "$maxconns" ]; then
  warn "net.core.somaxconn is below $maxconns: connection setup may see SYN retries (wrk's latency starts after connect, so the table is unaffected; the warm-up absorbs it)"
fi
tw=$(cat /proc/sys/net/ipv4/tcp_tw_reuse 2>/dev/null || echo 0)
[ "$tw" != 0 ] || warn "net.ipv4.tcp_tw_reuse is 0: many rounds at 10,000 connections may run out of loopback ports (TIME_WAIT)"

build_server

# wrk's done() hook prints the percentiles from its full latency histogram
# (in microseconds), p99.9 included, and the error counts.
cat > "$work/report.lua" <<'LUA'
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("SCALE %.0f %d %d %d %d %d %d %d %d\n",
    summary.requests / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(99), latency:percentile(99.9),
    e.connect, e.read, e.write, e.timeout, e.status))
end
LUA


start_server() {
  port_busy "$PORT" && die "port $PORT is already in use; set PORT"
  taskset -c "$SERVER_CPU" "$work/server" -fw "$1" -addr "$HOST:$PORT" &
  server_pids=("$!") # one server at a time (lib.sh stops it on exit)
  for _ in $(seq 50); do
    if curl -s -o /dev/null --max-time 1 "http://$HOST:$PORT/hello"; then
      return 0
    fi
    kill -0 "${server_pids[0]}" 2>/dev/null || die "server $1 exited"
    sleep 0.1
  done
  die "server $1 did not start"
}

stop_server() {
  stop_pid "${server_pids[0]}"
  server_pids=()
}

# status_kb field -> the server's /proc status field in kB
status_kb() { awk -v f="$1:" '$1==f {print $2}' "/proc/${server_pids[0]}/status"; }

# run_wrk seconds conns -> prints "rps p50 p99 p999 connect read write timeout status"
run_wrk() {
  local secs=$1 conns=$2 threads=$WRK_THREADS
  [ "$threads" -gt "$conns" ] && threads=$conns
  taskset -c "$WRK_CPU" wrk "-t$threads" "-c$conns" "-d${secs}s" --timeout "${TIMEOUT}s" \
    -s "$work/report.lua" "http://$HOST:$PORT/hello" > "$work/wrk.out" 2>&1 &
  wrk_pid=$!
  wait "$wrk_pid" || die "wrk failed: $(cat "$work/wrk.out")"
  wrk_pid=""
  kill -0 "${server_pids[0]}" 2>/dev/null || die "the server died under $conns connections"
  awk '/^SCALE / {print $2, $3, $4, $5, $6, $7, $8, $9, $10}' "$work/wrk.out"
}

results="$work/results.tsv"
: > "$results"
read -r -a fws <<< "$FRAMEWORKS"
n=${#fws[@]}
echo "scale.sh: $ROUNDS rounds × connections [$CONNS] × frameworks [$FRAMEWORKS], ${DURATION}s each ($WARMUP warm-up), GET /hello; server on cpu $SERVER_CPU, wrk on cpu $WRK_CPU ($WRK_THREADS thread(s)); RLIMIT_NOFILE $NOFILE" >&2
for round in $(seq 1 "$ROUNDS"); do
  for conns in $CONNS; do
    for i in $(seq 0 $((n - 1))); do
      fw=${fws[$(((i + round - 1) % n))]}
      start_server "$fw"
      run_wrk 1 50 > /dev/null   # warm-up: pools, page faults, cache-cold paths
      sleep 0.5                  # the warm-up's connections close
      idle=$(status_kb VmRSS)
      if [ "$WARMUP" = steady ]; then
        run_wrk 2 "$conns" > /dev/null  # the same number of connections: worker goroutines, stacks, heap
        sleep 0.5
      fi
      read -r rps p50 p99 p999 ec er ew et es <<< "$(run_wrk "$DURATION" "$conns")"
      peak=$(status_kb VmHWM)
      [ "${rps%.*}" -gt 0 ] || warn "no request completed at $conns connections for $fw (machine overloaded, or DURATION too short to connect them all)"
      stop_server
      errs=$((ec + er + ew + et + es))
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
        "$conns" "$fw" "$round" "$rps" "$p50" "$p99" "$p999" "$idle" "$peak" "$errs" >> "$results"
      echo "scale.sh: round $round c=$conns $fw: $rps req/s p50 ${p50}µs p99 ${p99}µs p99.9 ${p999}µs rss ${idle}→${peak} kB errors $errs (connect $ec read $er write $ew timeout $et status $es)" >&2
    done
  done
done
[ -n "$OUT" ] && cat "$results" >> "$OUT"

# col conns fw column -> median of that column
col() { awk -F'\t' -v c="$1" -v f="$2" -v k="$3" '$1==c && $2==f {print $k}' "$results" | median; }
ms() { awk -v u="$1" 'BEGIN {printf "%.2f", u/1000}'; }

echo
echo "Medians of $ROUNDS rounds, ${DURATION}s each after a $WARMUP warm-up, GET /hello over loopback (latency in ms, RSS in MiB, RSS/conn in KiB)."
echo "The × columns are medians of the round-by-round ratios (one round's runs are back to back)."
echo
echo "| conns | framework | req/s | × raw | × fiber-v3 | p50 | p99 | p99 × fiber-v3 | p99.9 | peak RSS | RSS/conn | errors |"
echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for conns in $CONNS; do
  for fw in "${fws[@]}"; do
    peak=$(col "$conns" "$fw" 9)
    perconn=$(awk -F'\t' -v c="$conns" -v f="$fw" '$1==c && $2==f {print ($9-$8)/c}' "$results" | median)
    errs=$(awk -F'\t' -v c="$conns" -v f="$fw" '$1==c && $2==f {s+=$10} END {print s+0}' "$results")
    name=$fw; [ "$fw" = fx ] && name="**fx**"
    printf '| %s | %s | %.0f | %s | %s | %s | %s | %s | %s | %.1f | %.1f | %s |\n' "$conns" "$name" \
      "$(col "$conns" "$fw" 4)" "$(paired "$results" "$conns" "$fw" raw-fasthttp 4)" \
      "$(paired "$results" "$conns" "$fw" fiber-v3 4)" \
      "$(ms "$(col "$conns" "$fw" 5)")" "$(ms "$(col "$conns" "$fw" 6)")" \
      "$(paired "$results" "$conns" "$fw" fiber-v3 6)" "$(ms "$(col "$conns" "$fw" 7)")" \
      "$(awk -v k="$peak" 'BEGIN {print k/1024}')" "$perconn" "$errs"
  done
done
