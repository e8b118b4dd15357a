#!/usr/bin/env bash
# Load test of the bench service over loopback. Every implementation
# (cmd/server) is started once, all pinned to one core with taskset, each
# on its own ports; wrk, pinned to another core, drives one of them at a
# time for a bounded time per endpoint. The runs of one endpoint are back
# to back, one per framework in a rotated order, so the frameworks' figures
# for an endpoint are taken seconds apart: a machine whose speed drifts
# (a VM's does, by ±20% over minutes) moves them together, and the ratios
# of one round are paired. The servers not being driven sit idle. Prints,
# per endpoint and framework, the median req/s over the rounds and the
# median of the round-by-round ratios to raw fasthttp and to Fiber v3.
#
# Usage: bench/load.sh            (from anywhere in the repository)
# Environment (defaults):
#   DURATION=5      seconds of wrk per endpoint and round
#   ROUNDS=2        rounds (≥ 2)
#   CONNS=50        wrk connections (one wrk thread)
#   FRAMEWORKS="raw-fasthttp fx fiber-v2 fiber-v3 echo-v4 echo-v5 gin chi servemux huma"
#   ENDPOINTS="hello user-error error-var panic not-found orders-422 hello-mw5"
#   SERVER_CPU=0 WRK_CPU=1   cores for the server and for wrk
#   PORT=18080      framework i (from 0, in FRAMEWORKS order) serves the plain
#                   build on PORT+2i and the middleware build on PORT+2i+1
#   OUT=            also append the raw measurements (tsv) to this file
# Only 127.0.0.1 is ever targeted. Every process the script starts (server,
# wrk) is stopped on exit, including on Ctrl-C.
set -euo pipefail

DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-2}
CONNS=${CONNS:-50}
FRAMEWORKS=${FRAMEWORKS:-"raw-fasthttp fx fiber-v2 fiber-v3 echo-v4 echo-v5 gin chi servemux huma"}
ENDPOINTS=${ENDPOINTS:-"hello user-error error-var panic not-found orders-422 hello-mw5"}
SERVER_CPU=${SERVER_CPU:-0}
WRK_CPU=${WRK_CPU:-1}
PORT=${PORT:-18080}
OUT=${OUT:-}
HOST=127.0.0.1

NAME=load.sh
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

[ "$ROUNDS" -ge 2 ] || die "ROUNDS must be at least 2"
require_tools

build_server

cat > "$work/orders.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"item":"","quantity":0,"email":"not-an-email"}'
wrk.headers["Content-Type"] = "application/json"
LUA

# target endpoint base-port -> "port path script"
target() {
  local base=$2
  case "$1" in
    hello)      echo "$base /hello" ;;
    user-error) echo "$base /users/missing" ;;
    error-var)  echo "$base /error" ;;
    panic)      echo "$base /panic" ;;
    not-found)  echo "$base /nope" ;;
    orders-422) echo "$base /orders $work/orders.lua" ;;
    hello-mw5)  echo "$((base + 1)) /hello" ;;
    *) die "unknown endpoint $1" ;;
  esac
}

# start_server framework base-port: serves the plain build on base-port and
# the middleware build on base-port+1, and waits until both answer.
start_server() {
  local fw=$1 base=$2 pid
  if port_busy "$base" || port_busy "$((base + 1))"; then
    die "port $base or $((base + 1)) is already in use; set PORT"
  fi
  taskset -c "$SERVER_CPU" "$work/server" -fw "$fw" -addr "$HOST:$base" -addr-mw "$HOST:$((base + 1))" &
  pid=$!
  server_pids+=("$pid")
  for _ in $(seq 50); do
    if curl -s -o /dev/null --max-time 1 "http://$HOST:$base/hello" &&
       curl -s -o /dev/null --max-time 1 "http://$HOST:$((base + 1))/hello"; then
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || die "server $fw exited"
    sleep 0.1
  done
  die "server $fw did not start"
}

# run_wrk seconds port path [script] -> prints req/s
run_wrk() {
  local secs=$1 port=$2 path=$3 script=${4:-}
  local args=(-t1 "-c$CONNS" "-d${secs}s" --timeout 2s)
  [ -n "$script" ] && args+=(-s "$script")
  taskset -c "$WRK_CPU" wrk "${args[@]}" "http://$HOST:$port$path" > "$work/wrk.out" 2>&1 &
  wrk_pid=$!
  wait "$wrk_pid" || die "wrk failed: $(cat "$work/wrk.out")"
  wrk_pid=""
  if grep -q "Socket errors" "$work/wrk.out"; then
    warn "$(grep 'Socket errors' "$work/wrk.out") on $path"
  fi
  awk '/^Requests\/sec:/ {print $2}' "$work/wrk.out"
}

results="$work/results.tsv"
: > "$results"
read -r -a fws <<< "$FRAMEWORKS"
n=${#fws[@]}
echo "load.sh: $ROUNDS rounds × endpoints [$ENDPOINTS] × $n frameworks, ${DURATION}s each, $CONNS connections; servers on cpu $SERVER_CPU, wrk on cpu $WRK_CPU" >&2
for i in $(seq 0 $((n - 1))); do
  start_server "${fws[$i]}" "$((PORT + 2 * i))"
  run_wrk 1 "$((PORT + 2 * i))" /hello > /dev/null   # warm-up
done
for round in $(seq 1 "$ROUNDS"); do
  for ep in $ENDPOINTS; do
    for k in $(seq 0 $((n - 1))); do
      i=$(((k + round - 1) % n))
      fw=${fws[$i]}
      read -r port path script <<< "$(target "$ep" "$((PORT + 2 * i))")"
      rps=$(run_wrk "$DURATION" "$port" "$path" "${script:-}")
      printf '%s\t%s\t%s\t%s\n' "$ep" "$fw" "$round" "$rps" >> "$results"
      echo "load.sh: round $round $ep $fw $rps req/s" >&2
    done
  done
done
[ -n "$OUT" ] && cat "$results" >> "$OUT"

echo
echo "| endpoint | framework | req/s (median of $ROUNDS) | × raw fasthttp | × fiber-v3 |"
echo "|---|---|---:|---:|---:|"
for ep in $ENDPOINTS; do
  for fw in "${fws[@]}"; do
    m=$(awk -F'\t' -v e="$ep" -v f="$fw" '$1==e && $2==f {print $4}' "$results" | median)
    name=$fw; [ "$fw" = fx ] && name="**fx**"
    printf '| %s | %s | %.0f | %s | %s |\n' "$ep" "$name" "$m" \
      "$(paired "$results" "$ep" "$fw" raw-fasthttp 4)" "$(paired "$results" "$ep" "$fw" fiber-v3 4)"
  done
done
