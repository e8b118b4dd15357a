# Shared by load.sh and scale.sh (sourced, not run): the work directory,
# the processes to stop on exit, the tool checks and the median. The caller
# sets NAME (its name in messages) before sourcing it.

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d)
server_pids=() # every server started and not yet stopped
wrk_pid=""

# stop_pid pid: stops one process the script started, if still running.
stop_pid() {
  if [ -n "$1" ] && kill -0 "$1" 2>/dev/null; then
    kill "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
  fi
}

cleanup() {
  for pid in "$wrk_pid" "${server_pids[@]}"; do
    stop_pid "$pid"
  done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

die() { echo "$NAME: $*" >&2; exit 1; }
warn() { echo "$NAME: warning: $*" >&2; }

# require_tools: taskset, curl and wrk (installed with apt-get if missing),
# and two cores (the servers on one, wrk on another).
require_tools() {
  command -v taskset >/dev/null || die "taskset (util-linux) is required"
  command -v curl >/dev/null || die "curl is required"
  if ! command -v wrk >/dev/null; then
    echo "$NAME: installing wrk" >&2
    if [ "$(id -u)" = 0 ]; then
      (apt-get update -qq && apt-get install -y -qq wrk) >&2 || die "could not install wrk"
    else
      sudo apt-get update -qq && sudo apt-get install -y -qq wrk >&2 || die "could not install wrk"
    fi
  fi
  [ "$(nproc --all)" -ge 2 ] || die "needs at least two cores (server and wrk on separate cores)"
}

port_busy() { curl -s -o /dev/null --max-time 1 "http://$HOST:$1/" ; }

# build_server: cmd/server into the work directory.
build_server() {
  echo "$NAME: building cmd/server" >&2
  (cd "$here" && go build -o "$work/server" ./cmd/server)
}

# median: the median of the numbers on stdin, one per line.
median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

# paired file key fw ref col: over the rows of the tsv file whose first
# column is key (columns: key, framework, round, values...), the median
# over rounds of fw's value in column col divided by ref's in the same
# round; "–" when ref is not in FRAMEWORKS or has no row of key (a
# flagship-* endpoint of raw fasthttp). One round's runs are taken
# back to back, so a machine whose speed drifts moves both sides of a
# ratio together.
paired() {
  case " $FRAMEWORKS " in
    *" $4 "*) ;;
    *) echo "–"; return ;;
  esac
  awk -F'\t' -v e="$2" -v f="$3" -v r="$4" -v k="$5" '$1==e && $2==f {a[$3]=$k} $1==e && $2==r {b[$3]=$k}
    END {for (i in a) if (b[i] > 0) print a[i]/b[i]}' "$1" > "$work/paired"
  if [ -s "$work/paired" ]; then median < "$work/paired" | awk '{printf "%.2f", $1}'; else echo "–"; fi
}
