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
# median of the round-by-round ratios to raw fasthttp, to Fiber v3 and to
# Huma.
#
# The flagship-* endpoints drive the flagship orders service (typed
# operations behind API-key auth, the tenant check, a rate limit and, for
# POST, idempotency) of the frameworks that have one: fx, huma, fiber-v3
# (bench.FlagshipFrameworks; the others are left out of those rows):
#   flagship-create  POST /orders, a valid order, a new Idempotency-Key per
#                    request → 201 + Location (each request creates one)
#   flagship-get     GET /orders/ord_1 → 200, the order
#   flagship-422     POST /orders, five broken fields, a new key per
#                    request → 422 FX_VALIDATION_ERROR with five issues
# Before any timing, each of them is sent once to every flagship server and
# the answers must agree (status, Location, the JSON keys and value types
# of a success, the code and issue set of an error; Huma's "$schema" link
# aside), else the script stops: needs jq.
#
# Usage: bench/load.sh            (from anywhere in the repository)
# Environment (defaults):
#   DURATION=5      seconds of wrk per endpoint and round
#   ROUNDS=2        rounds (≥ 2)
#   CONNS=50        wrk connections (one wrk thread)
#   FRAMEWORKS="raw-fasthttp fx fiber-v2 fiber-v3 echo-v4 echo-v5 gin chi servemux huma"
#   ENDPOINTS="hello user-error error-var panic not-found orders-422 hello-mw5"
#             (flagship-create flagship-get flagship-422 are opt-in)
#   SERVER_CPU=0 WRK_CPU=1   cores for the server and for wrk
#   PORT=18080      framework i (from 0, in FRAMEWORKS order) serves the plain
#                   build on PORT+3i, the middleware build on PORT+3i+1 and
#                   its flagship, if any, on PORT+3i+2
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

# The flagship's requests: its API key and tenant (cmd/server's), the
# bodies, and for POST an Idempotency-Key per request, unique over the run
# (prefix from the script's argument, then a counter).
FLAG_KEY=ak_load_0123456789
FLAG_TENANT=load
FLAG_VALID='{"customer":"Ada Lovelace","email":"ada@example.com","lines":[{"sku":"BOOK-1","qty":2}]}'
FLAG_INVALID='{"customer":"","email":"nope","lines":[{"sku":"b!","qty":0},{"sku":"CUP-1","qty":101}]}'
flag_post_lua() {
  cat <<LUA
wrk.method = "POST"
wrk.body = '$1'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-API-Key"] = "$FLAG_KEY"
wrk.headers["X-Tenant-ID"] = "$FLAG_TENANT"
local prefix, n = "k", 0
function init(args) prefix = args[1] or prefix end
function request()
  n = n + 1
  wrk.headers["Idempotency-Key"] = prefix .. "-" .. n
  return wrk.format()
end
LUA
}
flag_post_lua "$FLAG_VALID" > "$work/flag-create.lua"
flag_post_lua "$FLAG_INVALID" > "$work/flag-422.lua"
cat > "$work/flag-get.lua" <<LUA
wrk.headers["X-API-Key"] = "$FLAG_KEY"
wrk.headers["X-Tenant-ID"] = "$FLAG_TENANT"
LUA

# target endpoint base-port -> "port path script"
target() {
  local base=$2
  case "$1" in
    flagship-create) echo "$((base + 2)) /orders $work/flag-create.lua" ;;
    flagship-get)    echo "$((base + 2)) /orders/ord_1 $work/flag-get.lua" ;;
    flagship-422)    echo "$((base + 2)) /orders $work/flag-422.lua" ;;
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

# has_flagship framework: whether it serves the flagship orders service.
has_flagship() { case " $FLAGSHIPS " in *" $1 "*) return 0 ;; esac; return 1; }
FLAGSHIPS="fx huma fiber-v3"
want_flagship=""
case " $ENDPOINTS " in *" flagship-"*) want_flagship=1 ;; esac
[ -z "$want_flagship" ] || command -v jq >/dev/null || die "jq is required for the flagship-* endpoints"

# start_server framework base-port: serves the plain build on base-port,
# the middleware build on base-port+1 and, when a flagship-* endpoint is
# asked for and the framework has one, its flagship on base-port+2; waits
# until the first two answer.
start_server() {
  local fw=$1 base=$2 pid orders=()
  if port_busy "$base" || port_busy "$((base + 1))" || port_busy "$((base + 2))"; then
    die "port $base, $((base + 1)) or $((base + 2)) is already in use; set PORT"
  fi
  if [ -n "$want_flagship" ] && has_flagship "$fw"; then
    orders=(-addr-orders "$HOST:$((base + 2))")
  fi
  taskset -c "$SERVER_CPU" "$work/server" -fw "$fw" -addr "$HOST:$base" -addr-mw "$HOST:$((base + 1))" "${orders[@]}" &
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

# flag_answer port method path [body key]: one request to a flagship with
# its API key and tenant (and, for POST, the body and Idempotency-Key key),
# printed as the
# status, the Location and the body's shape: a success's sorted JSON
# paths with their value types, an error's code and sorted issue set.
flag_answer() {
  local port=$1 method=$2 path=$3 body=${4:-} key=${5:-} args=() status location
  args=(-s --max-time 5 -X "$method" -H "X-API-Key: $FLAG_KEY" -H "X-Tenant-ID: $FLAG_TENANT"
    -D "$work/check.head" -o "$work/check.body" -w '%{http_code}')
  [ -n "$body" ] && args+=(-H "Content-Type: application/json" -H "Idempotency-Key: $key" --data-binary "$body")
  status=$(curl "${args[@]}" "http://$HOST:$port$path") || die "no answer from $HOST:$port$path"
  location=$(awk -F': *' 'tolower($1)=="location" {sub(/\r$/, "", $2); print $2}' "$work/check.head")
  echo "$status ${location:--} $(jq -c 'del(."$schema") | if has("error")
    then {code: .error.code, issues: ([.error.details.issues[]? | .location + " " + (.path | join("."))] | sort)}
    else [paths(scalars) as $p | ($p | map(tostring) | join(".")) + ":" + (getpath($p) | type)] | sort end' \
    "$work/check.body" 2>/dev/null || echo "not-json")"
}

# check_flagships: every flagship-* endpoint asked for, once against each
# flagship server (the create first, so that ord_1 exists); the answers of
# all must be those of the first, else the script stops.
check_flagships() {
  local i fw port ep got first=""
  local -A ref=()
  for i in $(seq 0 $((n - 1))); do
    fw=${fws[$i]}
    has_flagship "$fw" || continue
    port=$((PORT + 3 * i + 2))
    for ep in flagship-create flagship-get flagship-422; do
      case $ep in
        flagship-create) got=$(flag_answer "$port" POST /orders "$FLAG_VALID" check-create) ;;
        flagship-get)    got=$(flag_answer "$port" GET /orders/ord_1) ;;
        flagship-422)    got=$(flag_answer "$port" POST /orders "$FLAG_INVALID" check-422) ;;
      esac
      if [ -z "$first" ]; then
        ref[$ep]=$got
        echo "load.sh: $ep $fw: $got" >&2
      elif [ "$got" != "${ref[$ep]}" ]; then
        die "$ep: $fw answers $got, $first answers ${ref[$ep]}"
      else
        echo "load.sh: $ep $fw: same answer" >&2
      fi
    done
    [ -n "$first" ] || first=$fw
  done
}

# run_wrk seconds port path [script [arg]] -> prints req/s
run_wrk() {
  local secs=$1 port=$2 path=$3 script=${4:-} arg=${5:-}
  local args=(-t1 "-c$CONNS" "-d${secs}s" --timeout 2s)
  [ -n "$script" ] && args+=(-s "$script")
  local tail=()
  [ -n "$arg" ] && tail=(-- "$arg")
  taskset -c "$WRK_CPU" wrk "${args[@]}" "http://$HOST:$port$path" "${tail[@]}" > "$work/wrk.out" 2>&1 &
  wrk_pid=$!
  wait "$wrk_pid" || die "wrk failed: $(cat "$work/wrk.out")"
  wrk_pid=""
  if grep -q "Socket errors" "$work/wrk.out"; then
    warn "$(grep 'Socket errors' "$work/wrk.out") on $path"
  fi
  if [ "${WANT_2XX:-}" ] && grep -q "Non-2xx" "$work/wrk.out"; then
    warn "$(grep 'Non-2xx' "$work/wrk.out") on $path"
  fi
  awk '/^Requests\/sec:/ {print $2}' "$work/wrk.out"
}

results="$work/results.tsv"
: > "$results"
read -r -a fws <<< "$FRAMEWORKS"
n=${#fws[@]}
echo "load.sh: $ROUNDS rounds × endpoints [$ENDPOINTS] × $n frameworks, ${DURATION}s each, $CONNS connections; servers on cpu $SERVER_CPU, wrk on cpu $WRK_CPU" >&2
for i in $(seq 0 $((n - 1))); do
  start_server "${fws[$i]}" "$((PORT + 3 * i))"
  run_wrk 1 "$((PORT + 3 * i))" /hello > /dev/null   # warm-up
done
if [ -n "$want_flagship" ]; then
  check_flagships
  for i in $(seq 0 $((n - 1))); do # warm-up, on the order the check created
    if has_flagship "${fws[$i]}"; then
      run_wrk 1 "$((PORT + 3 * i + 2))" /orders/ord_1 "$work/flag-get.lua" > /dev/null
    fi
  done
fi
for round in $(seq 1 "$ROUNDS"); do
  for ep in $ENDPOINTS; do
    for k in $(seq 0 $((n - 1))); do
      i=$(((k + round - 1) % n))
      fw=${fws[$i]}
      case $ep in
        flagship-*) has_flagship "$fw" || continue ;;
      esac
      read -r port path script <<< "$(target "$ep" "$((PORT + 3 * i))")"
      want=""
      case $ep in flagship-create | flagship-get) want=1 ;; esac
      rps=$(WANT_2XX=$want run_wrk "$DURATION" "$port" "$path" "${script:-}" "$fw-$round-$ep")
      printf '%s\t%s\t%s\t%s\n' "$ep" "$fw" "$round" "$rps" >> "$results"
      echo "load.sh: round $round $ep $fw $rps req/s" >&2
    done
  done
done
[ -n "$OUT" ] && cat "$results" >> "$OUT"

echo
echo "| endpoint | framework | req/s (median of $ROUNDS) | × raw fasthttp | × fiber-v3 | × huma |"
echo "|---|---|---:|---:|---:|---:|"
for ep in $ENDPOINTS; do
  for fw in "${fws[@]}"; do
    rows=$(awk -F'\t' -v e="$ep" -v f="$fw" '$1==e && $2==f {print $4}' "$results")
    [ -n "$rows" ] || continue # a flagship-* endpoint of a framework without one
    m=$(median <<< "$rows")
    name=$fw; [ "$fw" = fx ] && name="**fx**"
    printf '| %s | %s | %.0f | %s | %s | %s |\n' "$ep" "$name" "$m" \
      "$(paired "$results" "$ep" "$fw" raw-fasthttp 4)" "$(paired "$results" "$ep" "$fw" fiber-v3 4)" \
      "$(paired "$results" "$ep" "$fw" huma 4)"
  done
done
