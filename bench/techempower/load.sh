#!/usr/bin/env bash
# The TechEmpower Framework Benchmarks' six tests, scaled to a two-core
# machine, against three servers of the same six tests on the same
# database code (internal/world: the same statements, pool size and
# template): fx (this module's program), raw fasthttp (cmd/raw) and
# Fiber v3 (cmd/fiber).
#
# Every server is pinned to one core (SERVER_CPU); wrk and PostgreSQL share
# the other (WRK_CPU). The shapes are TFB's: 64 connections for json, db,
# queries, fortunes and updates; 256 connections with 16 requests
# pipelined per connection (pipeline.lua) for plaintext; queries and updates
# ask for 20 rows. Within a round, the three servers run one test back to
# back in a rotated order, so a machine whose speed drifts moves their
# figures together and the ratios of one round are paired. Prints, per
# test, each server's median req/s over the rounds and the median of the
# round-by-round ratios fx/raw and fx/fiber; then the same ratios of the
# requests served per CPU-second of the server (its user and system time
# from /proc during the run), which a machine shared with other work moves
# far less than req/s: a server's throughput there is mostly the share of
# its core the scheduler gives it.
#
# Before any timing every server is asked each path once: all must answer
# 200 with the same Content-Type, else the script stops.
#
# Usage: bench/techempower/load.sh   (from anywhere in the repository)
# Environment (defaults):
#   DURATION=5      seconds of wrk per test, server and round
#   ROUNDS=3        rounds (≥ 3: the median needs them)
#   TESTS="json plaintext db queries fortunes updates"
#   SERVER_CPU=0 WRK_CPU=1
#   PORT=18480      servers on PORT, PORT+1, PORT+2; PostgreSQL on PORT+10
#   DATABASE_URL=   use this database instead of starting a private
#                   PostgreSQL with postgres.sh (it must hold TFB's rows)
#   OUT=            also append the raw measurements (tsv) to this file
# Only 127.0.0.1 is ever targeted. Every process the script starts (servers,
# wrk, PostgreSQL) is stopped on exit, including on Ctrl-C.
set -euo pipefail

DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-3}
TESTS=${TESTS:-"json plaintext db queries fortunes updates"}
SERVER_CPU=${SERVER_CPU:-0}
WRK_CPU=${WRK_CPU:-1}
PORT=${PORT:-18480}
OUT=${OUT:-}
HOST=127.0.0.1
FRAMEWORKS="fx raw fiber" # the names paired() (lib.sh) looks up

NAME=techempower/load.sh
te=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib.sh
. "$te/../lib.sh"

[ "$ROUNDS" -ge 3 ] || die "ROUNDS must be at least 3"
require_tools

pgdir=""
stop_postgres() {
  if [ -n "$pgdir" ]; then
    "$te/postgres.sh" stop "$pgdir" >/dev/null 2>&1 || true
    rm -rf "$pgdir"
    pgdir=""
  fi
}
trap 'stop_postgres; cleanup' EXIT

if [ -z "${DATABASE_URL:-}" ]; then
  # directly under /tmp: run as root, postgres.sh runs the server as the
  # postgres user, who cannot enter the root-only $work
  pgdir=$(mktemp -d /tmp/techempower-pg.XXXXXX)
  echo "$NAME: starting PostgreSQL on cpu $WRK_CPU, port $((PORT + 10))" >&2
  line=$(taskset -c "$WRK_CPU" "$te/postgres.sh" start "$pgdir" "$((PORT + 10))" | grep '^DATABASE_URL=') ||
    die "postgres.sh start failed"
  export DATABASE_URL=${line#DATABASE_URL=}
fi

echo "$NAME: building fx, raw and fiber" >&2
(cd "$te" && go build -o "$work/fx" . && go build -o "$work/raw" ./cmd/raw && go build -o "$work/fiber" ./cmd/fiber)

read -r -a fws <<< "$FRAMEWORKS"
n=${#fws[@]}
for i in $(seq 0 $((n - 1))); do
  fw=${fws[$i]}
  port=$((PORT + i))
  ! port_busy "$port" || die "port $port is already in use"
  taskset -c "$SERVER_CPU" "$work/$fw" -addr "$HOST:$port" > "$work/$fw.log" 2>&1 &
  server_pids+=($!)
  for _ in $(seq 1 100); do
    port_busy "$port" && break
    kill -0 "${server_pids[-1]}" 2>/dev/null || die "$fw exited: $(cat "$work/$fw.log")"
    sleep 0.1
  done
  port_busy "$port" || die "$fw does not answer on port $port"
done

# path test: the URL path of a test.
path() {
  case $1 in
    json) echo /json ;;
    plaintext) echo /plaintext ;;
    db) echo /db ;;
    queries) echo "/queries?queries=20" ;;
    fortunes) echo /fortunes ;;
    updates) echo "/updates?queries=20" ;;
    *) die "unknown test $1" ;;
  esac
}

for t in $TESTS; do
  first=""
  for i in $(seq 0 $((n - 1))); do
    got=$(curl -s -o /dev/null -w '%{http_code} %{content_type}' "http://$HOST:$((PORT + i))$(path "$t")")
    case $got in 200\ *) ;; *) die "$t: ${fws[$i]} answers $got" ;; esac
    if [ -z "$first" ]; then first=$got; elif [ "$got" != "$first" ]; then
      die "$t: ${fws[$i]} answers $got, ${fws[0]} answers $first"
    fi
  done
done

# cpu_ticks pid: the CPU time (user and system, in clock ticks) the
# process has used so far.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)

# run_wrk seconds i test -> prints "req/s req/CPU-s" of server i: wrk's
# requests per second, and the requests served per second of CPU time the
# server used meanwhile (user and system, read from /proc). The second
# leaves out the time the server waited for its core, which on a shared
# machine moves far more than the server's own cost. Warns of socket
# errors and of any answer that is not 2xx (every answer of these tests
# must be 200).
run_wrk() {
  local secs=$1 port=$((PORT + $2)) pid=${server_pids[$2]} t=$3
  local args=(-t1 -c64 "-d${secs}s" --timeout 8s)
  local tail=()
  if [ "$t" = plaintext ]; then
    args=(-t1 -c256 "-d${secs}s" --timeout 8s -s "$te/pipeline.lua")
    tail=(-- 16)
  fi
  local before after
  before=$(cpu_ticks "$pid")
  taskset -c "$WRK_CPU" wrk "${args[@]}" "http://$HOST:$port$(path "$t")" "${tail[@]}" > "$work/wrk.out" 2>&1 &
  wrk_pid=$!
  wait "$wrk_pid" || die "wrk failed: $(cat "$work/wrk.out")"
  wrk_pid=""
  after=$(cpu_ticks "$pid")
  if grep -q "Socket errors" "$work/wrk.out"; then
    warn "$(grep 'Socket errors' "$work/wrk.out") on port $port, $t"
  fi
  if grep -q "Non-2xx" "$work/wrk.out"; then
    warn "$(grep 'Non-2xx' "$work/wrk.out") on port $port, $t"
  fi
  awk -v ticks=$((after - before)) -v hz="$hz" '
    / requests in / {n = $1}
    /^Requests\/sec:/ {rps = $2}
    END {printf "%s\t%.0f\n", rps, (ticks > 0 ? n * hz / ticks : 0)}' "$work/wrk.out"
}

results="$work/results.tsv"
: > "$results"
echo "$NAME: $ROUNDS rounds × [$TESTS] × [$FRAMEWORKS], ${DURATION}s each; servers on cpu $SERVER_CPU, wrk and PostgreSQL on cpu $WRK_CPU" >&2
for t in $TESTS; do # warm-up: one second of each test on each server
  for i in $(seq 0 $((n - 1))); do run_wrk 1 "$i" "$t" > /dev/null; done
done
for round in $(seq 1 "$ROUNDS"); do
  for t in $TESTS; do
    for k in $(seq 0 $((n - 1))); do
      i=$(((k + round - 1) % n))
      read -r rps eff <<< "$(run_wrk "$DURATION" "$i" "$t")"
      printf '%s\t%s\t%s\t%s\t%s\n' "$t" "${fws[$i]}" "$round" "$rps" "$eff" >> "$results"
      echo "$NAME: round $round $t ${fws[$i]} $rps req/s, $eff req per CPU-second" >&2
    done
  done
done
[ -n "$OUT" ] && cat "$results" >> "$OUT"

echo
echo "| test | fx req/s | raw fasthttp req/s | Fiber v3 req/s | fx / raw | fx / Fiber | fx / raw, req per CPU-s | fx / Fiber, req per CPU-s |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for t in $TESTS; do
  row="| $t"
  for fw in "${fws[@]}"; do
    m=$(awk -F'\t' -v e="$t" -v f="$fw" '$1==e && $2==f {print $4}' "$results" | median)
    row+=$(printf ' | %.0f' "$m")
  done
  row+=" | $(paired "$results" "$t" fx raw 4) | $(paired "$results" "$t" fx fiber 4)"
  echo "$row | $(paired "$results" "$t" fx raw 5) | $(paired "$results" "$t" fx fiber 5) |"
done
