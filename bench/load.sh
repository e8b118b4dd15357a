#!/usr/bin/env bash
# Load test of the bench service over loopback: each implementation in turn
# (cmd/server) pinned to one core with taskset, driven by wrk pinned to
# another core for a bounded time per endpoint, the frameworks interleaved
# over several rounds (each round in a rotated order). Prints the median
# req/s per endpoint and framework and the ratio to raw fasthttp.
#
# Usage: bench/load.sh            (from anywhere in the repository)
# Environment (defaults):
#   DURATION=5      seconds of wrk per endpoint and round
#   ROUNDS=2        rounds (≥ 2)
#   CONNS=50        wrk connections (one wrk thread)
#   FRAMEWORKS="raw-fasthttp fx fiber-v2 fiber-v3 echo-v4 echo-v5 gin chi servemux huma"
#   ENDPOINTS="hello user-error error-var panic not-found orders-422 hello-mw5"
#   SERVER_CPU=0 WRK_CPU=1   cores for the server and for wrk
#   PORT=18080      the plain build listens on PORT, the middleware build on PORT+1
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

here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
server_pid=""
wrk_pid=""

cleanup() {
  for pid in "$wrk_pid" "$server_pid"; do
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      kill "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    fi
  done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

die() { echo "load.sh: $*" >&2; exit 1; }

[ "$ROUNDS" -ge 2 ] || die "ROUNDS must be at least 2"
command -v taskset >/dev/null || die "taskset (util-linux) is required"
command -v curl >/dev/null || die "curl is required"
if ! command -v wrk >/dev/null; then
  echo "load.sh: installing wrk" >&2
  if [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && apt-get install -y -qq wrk) >&2 || die "could not install wrk"
  else
    sudo apt-get update -qq && sudo apt-get install -y -qq wrk >&2 || die "could not install wrk"
  fi
fi
[ "$(nproc --all)" -ge 2 ] || die "needs at least two cores (server and wrk on separate cores)"

echo "load.sh: building cmd/server" >&2
(cd "$here" && go build -o "$work/server" ./cmd/server)

cat > "$work/orders.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"item":"","quantity":0,"email":"not-an-email"}'
wrk.headers["Content-Type"] = "application/json"
LUA

# endpoint name -> "port path script"
target() {
  case "$1" in
    hello)      echo "$PORT /hello" ;;
    user-error) echo "$PORT /users/missing" ;;
    error-var)  echo "$PORT /error" ;;
    panic)      echo "$PORT /panic" ;;
    not-found)  echo "$PORT /nope" ;;
    orders-422) echo "$PORT /orders $work/orders.lua" ;;
    hello-mw5)  echo "$((PORT + 1)) /hello" ;;
    *) die "unknown endpoint $1" ;;
  esac
}

port_busy() { curl -s -o /dev/null --max-time 1 "http://$HOST:$1/" ; }

start_server() {
  if port_busy "$PORT" || port_busy "$((PORT + 1))"; then
    die "port $PORT or $((PORT + 1)) is already in use; set PORT"
  fi
  taskset -c "$SERVER_CPU" "$work/server" -fw "$1" -addr "$HOST:$PORT" -addr-mw "$HOST:$((PORT + 1))" &
  server_pid=$!
  for _ in $(seq 50); do
    if curl -s -o /dev/null --max-time 1 "http://$HOST:$PORT/hello" &&
       curl -s -o /dev/null --max-time 1 "http://$HOST:$((PORT + 1))/hello"; then
      return 0
    fi
    kill -0 "$server_pid" 2>/dev/null || die "server $1 exited"
    sleep 0.1
  done
  die "server $1 did not start"
}

stop_server() {
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
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
    echo "load.sh: warning: $(grep 'Socket errors' "$work/wrk.out") on $path" >&2
  fi
  awk '/^Requests\/sec:/ {print $2}' "$work/wrk.out"
}

results="$work/results.tsv"
: > "$results"
read -r -a fws <<< "$FRAMEWORKS"
n=${#fws[@]}
echo "load.sh: $ROUNDS rounds × $n frameworks × endpoints [$ENDPOINTS], ${DURATION}s each, $CONNS connections; server on cpu $SERVER_CPU, wrk on cpu $WRK_CPU" >&2
for round in $(seq 1 "$ROUNDS"); do
  for i in $(seq 0 $((n - 1))); do
    fw=${fws[$(((i + round - 1) % n))]}
    start_server "$fw"
    run_wrk 1 "$PORT" /hello > /dev/null   # warm-up
    for ep in $ENDPOINTS; do
      read -r port path script <<< "$(target "$ep")"
      rps=$(run_wrk "$DURATION" "$port" "$path" "${script:-}")
      printf '%s\t%s\t%s\t%s\n' "$ep" "$fw" "$round" "$rps" >> "$results"
      echo "load.sh: round $round $fw $ep $rps req/s" >&2
    done
    stop_server
  done
done
[ -n "$OUT" ] && cat "$results" >> "$OUT"

median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

echo
echo "| endpoint | framework | req/s (median of $ROUNDS) | × raw fasthttp |"
echo "|---|---|---:|---:|"
for ep in $ENDPOINTS; do
  base=$(awk -F'\t' -v e="$ep" '$1==e && $2=="raw-fasthttp" {print $4}' "$results" | median)
  for fw in "${fws[@]}"; do
    m=$(awk -F'\t' -v e="$ep" -v f="$fw" '$1==e && $2==f {print $4}' "$results" | median)
    if [ -n "$base" ] && [ "$base" != "0" ]; then
      ratio=$(awk -v a="$m" -v b="$base" 'BEGIN {printf "%.2f", a/b}')
    else
      ratio="–"
    fi
    name=$fw; [ "$fw" = fx ] && name="**fx**"
    printf '| %s | %s | %.0f | %s |\n' "$ep" "$name" "$m" "$ratio"
  done
done
