#!/usr/bin/env bash
# A private PostgreSQL for the TechEmpower entries, their tests and their
# load runs: its own data directory and port on 127.0.0.1, loaded with the
# TechEmpower Framework Benchmarks' database (hello_world, user
# benchmarkdbuser/benchmarkdbpass, tables World and Fortune), with
# pg_stat_statements preloaded so tests can count the statements a request
# runs. Nothing of the machine's own PostgreSQL (cluster, service, port,
# socket) is used or touched.
#
#   postgres.sh start DIR PORT   initdb in DIR (a new or empty directory),
#                                start on 127.0.0.1:PORT, load the rows and
#                                print DATABASE_URL=... on its last line
#   postgres.sh stop DIR         stop the server of DIR by the PID in
#                                DIR/postmaster.pid (fast shutdown) and wait
#                                for it to exit; nothing to stop is no error
#   postgres.sh restart DIR      start the stopped server of DIR again, with
#                                its data and port
#
# Debian's PostgreSQL is installed (apt-get) when no server is found under
# /usr/lib/postgresql. PostgreSQL refuses to run as root: run as root, the
# script runs the server as the postgres user, which must be able to reach
# DIR (a directory directly under /tmp is; one under a root-only 0700
# directory is not).
set -euo pipefail

usage() { echo "usage: $0 start DIR PORT | stop DIR | restart DIR" >&2; exit 2; }

# bindir prints the newest PostgreSQL's bin directory, installing Debian's
# packages when there is none.
bindir() {
	local d
	d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
	if [[ -z $d || ! -x $d/postgres ]]; then
		if [[ $(id -u) != 0 ]]; then
			echo "$0: PostgreSQL is not installed; as root: apt-get install postgresql postgresql-contrib" >&2
			exit 1
		fi
		echo "$0: installing PostgreSQL (apt-get)" >&2
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq >&2
		apt-get install -y -qq --no-install-recommends postgresql postgresql-contrib >&2
		d=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
	fi
	echo "$d"
}

# as runs a command as the server's user: postgres when we are root, else us.
as() {
	if [[ $(id -u) == 0 ]]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

# launch starts the server of DIR and waits until it accepts connections.
launch() {
	local bin=$1 dir=$2
	if ! as "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 60 start >/dev/null; then
		echo "$0: PostgreSQL did not start; its log:" >&2
		cat "$dir/server.log" >&2 || true
		exit 1
	fi
}

start() {
	local dir=$1 port=$2 bin
	[[ $port =~ ^[0-9]+$ ]] || usage
	bin=$(bindir)
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	if [[ -n $(ls -A "$dir") ]]; then
		echo "$0: $dir is not empty" >&2
		exit 1
	fi
	if [[ $(id -u) == 0 ]]; then
		chown postgres: "$dir"
		chmod 700 "$dir"
		if ! runuser -u postgres -- test -w "$dir"; then
			echo "$0: the postgres user cannot reach $dir (a parent directory is closed to it): use a directory directly under /tmp" >&2
			exit 1
		fi
	fi
	as "$bin/initdb" -D "$dir" -U postgres -E UTF8 --locale=C.UTF-8 --no-sync \
		--auth-local=trust --auth-host=scram-sha-256 >/dev/null
	# TFB's settings that matter at this size; the socket lives in DIR, so
	# no other instance's socket directory is needed or touched.
	cat >>"$dir/postgresql.conf" <<-EOF
		listen_addresses = '127.0.0.1'
		port = $port
		unix_socket_directories = '$dir'
		max_connections = 200
		shared_buffers = 128MB
		work_mem = 16MB
		synchronous_commit = off
		wal_level = minimal
		max_wal_senders = 0
		random_page_cost = 2
		shared_preload_libraries = 'pg_stat_statements'
		pg_stat_statements.track = all
		log_line_prefix = '%t '
	EOF
	launch "$bin" "$dir"
	psql=("$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -U postgres)
	as "${psql[@]}" -d postgres >/dev/null <<-'EOF'
		CREATE ROLE benchmarkdbuser LOGIN PASSWORD 'benchmarkdbpass';
		CREATE DATABASE hello_world OWNER benchmarkdbuser;
	EOF
	as "${psql[@]}" -d hello_world >/dev/null <<-'EOF'
		BEGIN;
		CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
		GRANT EXECUTE ON FUNCTION pg_stat_statements_reset TO benchmarkdbuser;
		GRANT pg_read_all_stats TO benchmarkdbuser;
		CREATE TABLE World (
			id integer NOT NULL,
			randomNumber integer NOT NULL DEFAULT 0,
			PRIMARY KEY (id)
		);
		INSERT INTO World (id, randomNumber)
			SELECT i, least(floor(random() * 10000 + 1), 10000) FROM generate_series(1, 10000) AS i;
		CREATE TABLE Fortune (
			id integer NOT NULL,
			message varchar(2048) NOT NULL,
			PRIMARY KEY (id)
		);
		INSERT INTO Fortune (id, message) VALUES
			(1, 'fortune: No such file or directory'),
			(2, 'A computer scientist is someone who fixes things that aren''t broken.'),
			(3, 'After enough decimal places, nobody gives a damn.'),
			(4, 'A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1'),
			(5, 'A computer program does what you tell it to do, not what you want it to do.'),
			(6, 'Emacs is a nice operating system, but I prefer UNIX. — Tom Christaensen'),
			(7, 'Any program that runs right is obsolete.'),
			(8, 'A list is only as strong as its weakest link. — Donald Knuth'),
			(9, 'Feature: A bug with seniority.'),
			(10, 'Computers make very fast, very accurate mistakes.'),
			(11, '<script>alert("This should not be displayed in a browser alert box.");</script>'),
			(12, 'フレームワークのベンチマーク');
		GRANT ALL PRIVILEGES ON World, Fortune TO benchmarkdbuser;
		COMMIT;
		ANALYZE World;
		ANALYZE Fortune;
	EOF
	echo "DATABASE_URL=postgres://benchmarkdbuser:benchmarkdbpass@127.0.0.1:$port/hello_world?sslmode=disable"
}

restart() {
	local dir=$1
	[[ -f $dir/PG_VERSION ]] || { echo "$0: $dir holds no PostgreSQL data" >&2; exit 1; }
	launch "$(bindir)" "$dir"
}

stop() {
	local dir=$1 pid
	[[ -f $dir/postmaster.pid ]] || return 0
	pid=$(head -n 1 "$dir/postmaster.pid")
	[[ $pid =~ ^[0-9]+$ ]] || { echo "$0: no PID in $dir/postmaster.pid" >&2; exit 1; }
	kill -INT "$pid" 2>/dev/null || return 0 # SIGINT: fast shutdown
	for _ in $(seq 300); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	echo "$0: PostgreSQL ($pid) did not stop in 30 s" >&2
	exit 1
}

case ${1:-} in
start) [[ $# == 3 ]] || usage; start "$2" "$3" ;;
stop) [[ $# == 2 ]] || usage; stop "$2" ;;
restart) [[ $# == 2 ]] || usage; restart "$2" ;;
*) usage ;;
esac
