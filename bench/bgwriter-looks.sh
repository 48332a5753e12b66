#!/usr/bin/env bash
# bench/bgwriter-looks.sh: how many buffers the background writer looks at,
# per round and per allocation, under a write load and when it stops.
#
# Usage (as root, for perf's uprobes): bgwriter-looks.sh OUTDIR NAME=BINDIR ...
#   e.g. bgwriter-looks.sh /tmp/looks 0026=build/bench/0026/install/bin \
#          0027=build/bench/0027/install/bin
#
# Every buffer the writer looks at goes through SyncOneBuffer(), and every
# entry of a FIFO of pages on trial it reads through StrategyTrialAt(); perf
# counts the calls of the background writer process only (uprobes on the
# arm's own binary), exactly, whatever the machine's load.  Per arm and
# repetition, a fresh cluster (pgbench scale 10, ~1.2x shared_buffers =
# 128 MB, shared_buffers_numa = on) is prewarmed, then measured for
# WINDOW seconds while pgbench's tpcb-like runs at a fixed rate (6 clients,
# RATE tps), and for WINDOW seconds more once it has stopped: there, no
# allocation happens, and what the writer does is the cost of waiting for
# the next burst.  Writes and allocations are pg_stat_bgwriter's
# buffers_clean and buffers_alloc over the same windows.  Use release builds.
set -euo pipefail
. "$(dirname "$0")/../tools/lib.sh"

OUT=$1
shift
WINDOW=${WINDOW:-15}
RATE=${RATE:-500}
REPS=${REPS:-2}
is_root || die "bgwriter-looks.sh needs root (perf uprobes)"
ensure_packages linux-perf
ensure_user_dirs "$OUT"

probe() {	# probe EVENT BINDIR FUNCTION
	perf probe -q -x "$2/postgres" -a "$1=$3" 2>/dev/null ||
		perf probe -l 2>/dev/null | grep -q "probe_postgres:$1 " ||
		die "perf cannot probe $3 in $2/postgres" "is it a build with symbols?"
}

bgwriter_stats() {	# bgwriter_stats BINDIR PORT: buffers_clean|buffers_alloc
	as_user "$1/psql" -X -A -t -h /tmp -p "$2" -d postgres \
		-c "SELECT buffers_clean, buffers_alloc FROM pg_stat_bgwriter"
}

# count BINDIR PORT TAG PID: perf counts of the writer's calls for WINDOW s
count() {
	local s0 s1
	s0=$(bgwriter_stats "$1" "$2")
	perf stat -x, -e "probe_postgres:sob_$3,probe_postgres:sta_$3" -p "$4" \
		-o "$OUT/perf-$3.csv" -- sleep "$WINDOW" >/dev/null 2>&1
	sleep 1		# let the writer's statistics reach the view
	s1=$(bgwriter_stats "$1" "$2")
	awk -F, -v s0="$s0" -v s1="$s1" '
		/sob_/ { sob = $1 } /sta_/ { sta = $1 }
		END { split(s0, a, "|"); split(s1, b, "|");
			  printf "%d,%d,%d,%d", b[1] - a[1], b[2] - a[2], sob, sta }' \
		"$OUT/perf-$3.csv"
}

echo "arm,rep,phase,bgwriter_writes,allocations,buffers_looked_at,trial_entries_read" \
	>"$OUT/looks.csv"
for rep in $(seq "$REPS"); do
	for spec in "$@"; do
		name=${spec%%=*} bin=$(cd "${spec#*=}" && pwd)
		tag=${name//[^A-Za-z0-9]/_}
		probe "sob_$tag" "$bin" SyncOneBuffer
		probe "sta_$tag" "$bin" StrategyTrialAt
		data=$OUT/data-$tag port=$((20000 + RANDOM % 20000))
		rm -rf "$data"
		as_user "$bin/initdb" -D "$data" -N -A trust >"$OUT/initdb-$tag.log"
		cat >>"$data/postgresql.conf" <<-EOC
			port = $port
			listen_addresses = ''
			unix_socket_directories = '/tmp'
			shared_buffers = 128MB
			shared_buffers_numa = on
			autovacuum = off
			checkpoint_timeout = 1h
			max_wal_size = 20GB
			huge_pages = off
		EOC
		as_user "$bin/pg_ctl" -D "$data" -l "$OUT/server-$tag.log" -w start >/dev/null
		as_user "$bin/pgbench" -q -i -s 10 -h /tmp -p "$port" postgres >/dev/null 2>&1
		as_user "$bin/psql" -X -q -h /tmp -p "$port" -d postgres -c \
			"CREATE EXTENSION pg_prewarm; SELECT pg_prewarm('pgbench_accounts')" >/dev/null
		pid=$(as_user "$bin/psql" -X -A -t -h /tmp -p "$port" -d postgres -c \
			"SELECT pid FROM pg_stat_activity WHERE backend_type = 'background writer'")
		as_user "$bin/pgbench" -n -h /tmp -p "$port" -c 6 -j 2 -R "$RATE" \
			-T $((WINDOW + 4)) --random-seed=$((1000 + rep)) postgres \
			>"$OUT/pgbench-$tag-$rep.log" 2>&1 &
		bench=$!
		sleep 2
		busy=$(count "$bin" "$port" "$tag" "$pid")
		wait "$bench"
		idle=$(count "$bin" "$port" "$tag" "$pid")
		echo "$name,$rep,busy,$busy" >>"$OUT/looks.csv"
		echo "$name,$rep,idle,$idle" >>"$OUT/looks.csv"
		info "$name rep $rep: busy $busy, idle $idle (writes, allocations, looked at, trial entries read)"
		as_user "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null
		rm -rf "$data"
	done
done
perf probe -q -d 'probe_postgres:*' 2>/dev/null || true
column -s, -t "$OUT/looks.csv"
