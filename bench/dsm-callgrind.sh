#!/usr/bin/env bash
# bench/dsm-callgrind.sh: what interleaving dynamic shared memory segments
# (0021) costs in instructions, and what it costs without shmem_interleave.
#
# Usage: dsm-callgrind.sh OUTDIR NAME=BINDIR[:SETTING] ...
#   e.g. dsm-callgrind.sh /tmp/dsmcg 0020=build/cg/0020/install/bin \
#          0021=build/cg/0021/install/bin 0021-all=build/cg/0021/install/bin:all
#
# callgrind.py measures one backend in single-user mode, which has no
# parallel workers and so no DSM segments; here the whole server runs under
# callgrind (--trace-children: the postmaster forks the backend and the
# parallel workers), and counts twice:
#   - only inside dsm_impl_op() (--toggle-collect), summed over every
#     process: the instructions of creating, attaching, detaching and
#     destroying segments, where the patch's code is;
#   - everything the session's backend and its parallel workers execute.
# Each count is taken for K and 2K parallel hash joins in one session, and
# the difference divided by K, so that start-up and shutdown cancel out.
# Instruction counts do not depend on the machine's load; syscalls (mbind,
# fallocate) count only their user-mode wrapper.  Use release builds.
set -euo pipefail
. "$(dirname "$0")/../tools/lib.sh"

OUT=$1
shift
K=${K:-4}
ensure_packages valgrind
ensure_user_dirs "$OUT"

# run_server BINDIR SETTING TOGGLE NQUERIES TAG: one server under callgrind,
# one session of NQUERIES joins; its callgrind files in $OUT/TAG/.
run_server() {
	local bin=$1 setting=$2 toggle=$3 n=$4 tag=$5
	local data=$OUT/data-$tag dir=$OUT/$tag port=$((20000 + RANDOM % 20000))
	rm -rf "$data" "$dir"
	ensure_user_dirs "$dir"
	as_user "$bin/initdb" -D "$data" -N -A trust >"$OUT/initdb-$tag.log"
	cat >>"$data/postgresql.conf" <<-EOC
		port = $port
		listen_addresses = ''
		unix_socket_directories = '$OUT'
		shared_buffers = 32MB
		huge_pages = off
		dynamic_shared_memory_type = posix
		shmem_interleave = '$setting'
		max_parallel_workers_per_gather = 2
		parallel_setup_cost = 0
		parallel_tuple_cost = 0
		min_parallel_table_scan_size = 0
		work_mem = 64MB
		autovacuum = off
		jit = off
	EOC
	local vg=(valgrind --tool=callgrind --trace-children=yes
		--callgrind-out-file="$dir/cg.%p" --dump-instr=no)
	[ "$toggle" = - ] || vg+=(--toggle-collect="$toggle")
	as_user "${vg[@]}" "$bin/postgres" -D "$data" >"$OUT/server-$tag.log" 2>&1 &
	local i
	for i in $(seq 1 600); do
		as_user "$bin/pg_isready" -q -h "$OUT" -p "$port" && break
		sleep 1
	done
	local psql=(as_user "$bin/psql" -X -q -h "$OUT" -p "$port" -d postgres -v ON_ERROR_STOP=1)
	"${psql[@]}" <<-'EOS'
		CREATE TABLE inner_t AS SELECT g AS id, repeat('i', 300) AS pad FROM generate_series(1, 60000) g;
		CREATE TABLE outer_t AS SELECT g AS id, repeat('o', 10) AS pad FROM generate_series(1, 60000) g;
		ANALYZE inner_t, outer_t;
		CHECKPOINT;
	EOS
	# the measured session: its backend's pid first, then the joins
	{
		echo 'SELECT pg_backend_pid();'
		echo "SELECT sum(length(i.pad)) FROM outer_t o JOIN inner_t i ON o.id = i.id;"
		for i in $(seq 1 "$n"); do
			echo "SELECT sum(length(i.pad)) FROM outer_t o JOIN inner_t i ON o.id = i.id;"
		done
	} | "${psql[@]}" -At >"$dir/session.out"
	as_user "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null
	wait
}

# total_ir DIR [PIDS...]: the sum of "summary:" lines of the callgrind files
# in DIR (of these processes only, if given)
total_ir() {
	local dir=$1
	shift
	python3 - "$dir" "$@" <<-'EOP'
		import glob, os, re, sys
		d, pids = sys.argv[1], set(sys.argv[2:])
		total = 0
		for f in glob.glob(os.path.join(d, 'cg.*')):
		    pid = f.rsplit('.', 1)[1]
		    if pids and pid not in pids:
		        continue
		    for line in open(f):
		        m = re.match(r'(summary|totals): (\d+)', line)
		        if m:
		            total += int(m.group(2))
		            break
		print(total)
	EOP
}

# the pids of the session's backend and of the processes it started: the
# files written by processes that began after the backend did (the
# measured session is the only one then; background workers other than
# parallel ones are not started by anything here)
session_pids() {
	local dir=$1 backend
	backend=$(head -n 1 "$dir/session.out")
	# callgrind's files name their pid; pids grow while nothing wraps
	for f in "$dir"/cg.*; do
		p=${f##*.}
		[ "$p" -ge "$backend" ] && echo "$p"
	done
}

echo "arm,setting,dsm_impl_op_ir_per_join,session_ir_per_join" >"$OUT/results.csv"
for spec in "$@"; do
	name=${spec%%=*} rest=${spec#*=}
	bin=${rest%%:*} setting=off
	[[ $rest == *:* ]] && setting=${rest#*:}
	bin=$(cd "$bin" && pwd)
	step "arm $name ($bin, shmem_interleave = $setting)"
	declare -A ir=()
	for mode in dsm all; do
		toggle=dsm_impl_op
		[ $mode = all ] && toggle=-
		for n in "$K" $((2 * K)); do
			tag=$name-$mode-$n
			run_server "$bin" "$setting" "$toggle" "$n" "$tag"
			if [ $mode = dsm ]; then
				ir[$mode-$n]=$(total_ir "$OUT/$tag")
			else
				mapfile -t pids < <(session_pids "$OUT/$tag")
				ir[$mode-$n]=$(total_ir "$OUT/$tag" "${pids[@]}")
			fi
			info "$tag: ${ir[$mode-$n]} instructions"
		done
	done
	dsm=$(((ir[dsm-$((2 * K))] - ir[dsm-$K]) / K))
	all=$(((ir[all-$((2 * K))] - ir[all-$K]) / K))
	echo "$name,$setting,$dsm,$all" >>"$OUT/results.csv"
	unset ir
done
cat "$OUT/results.csv"
