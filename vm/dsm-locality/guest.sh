#!/bin/bash
# vm/dsm-locality/guest.sh: the guest half of vm/dsm-locality.sh (run in the
# guest as the unprivileged user, never by hand on the host).
#
# Usage: guest.sh SETTING OUTDIR
#   SETTING  shmem_interleave (off, all)
#   OUTDIR   a shared directory: filter, dsmmap.log, held.txt, explain.txt
#
# One cluster, the postmaster moved to CPU 0 (node 0) once started (so the
# leader, its child, runs there), max_parallel_workers_per_gather = nodes -
# 1, the workers pinned by the dsmmap.so shim to CPUs 1..N-1 (one per node,
# 1 vCPU per node).  The
# parallel hash join is run twice:
#  1. held (a function of its join condition sleeps, as in
#     src/test/numa/t/008_dsm_interleave.pl, but on every 1000th row, so
#     that every participant is soon asleep in its probe), to read every
#     participant's /proc/PID/maps (checks: every DSM mapping lies in the
#     shim's range, nothing else does; the main segment is at one address
#     in all), the CPU each is allowed and last ran on, and where the
#     segments' pages are; then cancelled;
#  2. in a counting window of the numamem plugin (mark start / stop), the
#     same join without the sleep, as EXPLAIN ANALYZE (workers launched,
#     batches).  The shim's log of that run shows where each process mapped
#     each segment.
set -euo pipefail

setting=$1
out=$2
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${PGBIN:-$TOP/build/install/bin}
NM=$TOP/build/numamem
HERE=$TOP/build/dsm-locality
SHIM=$HERE/dsmmap.so
D=$VM_SCRATCH/data
PORT=5433
DSM_LO=0x100000000000
DSM_HI=0x200000000000
nodes=$VM_NODES
ncpu=$(nproc --all)
[ "$ncpu" = "$nodes" ] || { echo "expected 1 vCPU per node, have $ncpu for $nodes nodes" >&2; exit 1; }
workers=$((nodes - 1))
rows=${DSM_ROWS:-100000}
wcpus=$(seq -s, 1 $((ncpu - 1)))

psql() { "$BIN/psql" -X -q -v ON_ERROR_STOP=1 -p $PORT -d postgres "$@"; }

"$BIN/initdb" -D "$D" -A trust --no-sync >"$out/initdb.log" 2>&1
cat >>"$D/postgresql.conf" <<EOF
port = $PORT
listen_addresses = ''
unix_socket_directories = '$VM_SCRATCH'
shared_buffers = 128MB
huge_pages = off
dynamic_shared_memory_type = posix
min_dynamic_shared_memory = 0
shmem_interleave = '$setting'
max_worker_processes = 8
max_parallel_workers = 8
max_parallel_workers_per_gather = $workers
parallel_leader_participation = on
parallel_setup_cost = 0
parallel_tuple_cost = 0
min_parallel_table_scan_size = 0
enable_parallel_hash = on
work_mem = 128MB
jit = off
autovacuum = off
fsync = off
synchronous_commit = off
EOF
export PGHOST=$VM_SCRATCH
: >"$out/dsmmap.log"
# Started on every CPU, so that "all" is every node (the server works it
# out at start-up from the CPUs it may run on), then moved to CPU 0 as
# src/test/numa/t/008_dsm_interleave.pl does: the leader, forked later,
# runs there.
env LD_PRELOAD="$SHIM" DSMMAP_LOG="$out/dsmmap.log" DSMMAP_WORKER_CPUS="$wcpus" \
	DSMMAP_COUNTER="$VM_SCRATCH/workers" \
	"$BIN/pg_ctl" -D "$D" -l "$out/server.log" -w start >/dev/null
pm=$(head -n 1 "$D/postmaster.pid")
taskset -p -c 0 "$pm" >/dev/null

psql -v ROWS="$rows" <<'EOF'
CREATE TABLE inner_t (id int, pad text);
CREATE TABLE outer_t (id int, pad text);
INSERT INTO inner_t SELECT g, repeat('i', 300) FROM generate_series(1, :ROWS) g;
INSERT INTO outer_t SELECT g, repeat('o', 10) FROM generate_series(1, :ROWS) g;
VACUUM ANALYZE inner_t, outer_t;
CREATE FUNCTION hold(a int, b int) RETURNS bool LANGUAGE plpgsql PARALLEL SAFE
  AS $$ BEGIN IF a % 1000 = 1 AND current_setting('dsm.hold', true) = 'on'
  THEN PERFORM pg_sleep(3600); END IF; RETURN true; END $$;
SELECT count(*) FROM inner_t; SELECT count(*) FROM outer_t;
EOF
JOIN="SELECT sum(length(i.pad)) FROM outer_t o JOIN inner_t i ON o.id = i.id AND hold(o.id, i.id)"

# The main segment: the largest shared mapping of the postmaster (anonymous
# shared memory shows as /dev/zero), outside the shim's range.
main=$(perl -ne 'my @f = split; next unless $f[1] =~ /s$/ && defined $f[5];
	my ($lo, $hi) = map { hex } split /-/, $f[0];
	if ($hi - $lo > $best) { $best = $hi - $lo; $line = join " ", split /-/, $f[0] }
	END { print "$line\n" }' "/proc/$pm/maps")
read -r main_lo main_hi <<<"$main"
# The DSM control segment: mapped by the postmaster at start-up (first in the log)
read -r _ ctl_pid ctl_lo ctl_len ctl_file _ < <(grep -m1 '^map ' "$out/dsmmap.log")
[ "$ctl_pid" = "$pm" ] || { echo "the first DSM mapping is not the postmaster's" >&2; exit 1; }
ctl_hi=$(printf '0x%x' $((ctl_lo + ctl_len)))

# ------------------------------------------------------------ held run
: >"$VM_SCRATCH/workers"
mkfifo "$VM_SCRATCH/held.in"
{
	echo "SET dsm.hold = on;"
	echo "SELECT pg_backend_pid();"
	echo "$JOIN;"
	sleep 3600
} >"$VM_SCRATCH/held.in" &
feeder=$!
psql -At <"$VM_SCRATCH/held.in" >"$VM_SCRATCH/held.out" 2>&1 &
held=$!
for _ in $(seq 600); do
	leader=$(head -n 1 "$VM_SCRATCH/held.out" 2>/dev/null || true)
	if [[ $leader =~ ^[0-9]+$ ]] &&
		[ "$(psql -Atc "SELECT count(*) FROM pg_stat_activity WHERE (pid = $leader OR leader_pid = $leader) AND wait_event = 'PgSleep'")" -ge $((workers + 1)) ]; then
		break
	fi
	sleep 0.5
done
[[ ${leader:-} =~ ^[0-9]+$ ]] || { echo "the held query did not start" >&2; cat "$VM_SCRATCH/held.out" >&2; exit 1; }
mapfile -t pids < <(psql -Atc "SELECT pid FROM pg_stat_activity WHERE pid = $leader OR leader_pid = $leader ORDER BY pid <> $leader, pid")
bad=0
{
	echo "postmaster $pm; main segment $main_lo-$main_hi; DSM control segment $ctl_lo +$ctl_len ($ctl_file)"
	echo "participants (leader first): ${pids[*]}"
	for pid in "${pids[@]}"; do
		[ -r "/proc/$pid/maps" ] || { echo "pid $pid: gone"; continue; }
		stat=$(cat "/proc/$pid/stat")
		rest=${stat##*) }
		read -r -a f <<<"$rest"
		# field 39 (processor) is the 37th after the command
		echo "pid $pid: $(tr '\0' ' ' <"/proc/$pid/cmdline" | sed 's/ *$//'); Cpus_allowed_list $(awk '/^Cpus_allowed_list/ { print $2 }' "/proc/$pid/status"); last CPU ${f[36]}; wait $(psql -Atc "SELECT coalesce(wait_event, '-') FROM pg_stat_activity WHERE pid = $pid")"
		DSM_LO=$DSM_LO DSM_HI=$DSM_HI MLO=0x$main_lo MHI=0x$main_hi perl -e '
			no warnings "portable";
			my ($lo, $hi, $mlo, $mhi) = map { hex } @ENV{qw(DSM_LO DSM_HI MLO MHI)};
			my ($n, $sz, $main, $bad) = (0, 0, 0, 0);
			while (<>) {
				my @f = split;
				my ($a, $b) = map { hex } split /-/, $f[0];
				my $file = $f[5] // "";
				my $indsm = $a < $hi && $b > $lo;
				my $isdsm = $file =~ m{^/dev/shm/PostgreSQL\.};
				if ($isdsm) { $n++; $sz += $b - $a }
				if ($indsm && !$isdsm) { print "  BAD: non-DSM mapping in the DSM range: $_"; $bad = 1 }
				if ($isdsm && !($a >= $lo && $b <= $hi)) { print "  BAD: DSM mapping outside the range: $_"; $bad = 1 }
				if ($a == $mlo && $b == $mhi) { $main = 1 }
				elsif ($a < $mhi && $b > $mlo) { print "  BAD: mapping overlapping the main segment: $_"; $bad = 1 }
				if ($a >= 0xffff800000000000) { print "  BAD: kernel address: $_"; $bad = 1 }
			}
			unless ($main) { print "  BAD: main segment not mapped at the postmaster'"'"'s address\n"; $bad = 1 }
			printf "  %d DSM mappings, all in the range, %.1f MiB; nothing else there; main segment at the postmaster'"'"'s address\n", $n, $sz / 1048576 unless $bad;
			exit $bad;' "/proc/$pid/maps" || bad=1
		grep -E 'PostgreSQL\.' "/proc/$pid/maps" | sed 's/^/  maps: /'
	done
	echo "segment pages by node (pagenodes: whole files, faulted in read-only):"
	# the control segment excluded
	mapfile -t segs < <(ls /dev/shm/PostgreSQL.* | grep -vxF "$ctl_file")
	"$HERE/pagenodes" "${segs[@]}" >"$VM_SCRATCH/pagenodes"
	sed 's/^/  /' "$VM_SCRATCH/pagenodes"
	awk '{ for (i = 3; i <= NF; i++) { split($i, kv, "="); s[kv[1]] += kv[2]; t += kv[2] } }
		END { printf "  total %d pages:", t; for (k in s) printf " %s=%d (%.1f%%)", k, s[k], 100 * s[k] / t; print "" }' "$VM_SCRATCH/pagenodes"
	echo "numa_maps of the participants, DSM lines (pages each process has mapped):"
	for pid in "${pids[@]}"; do grep PostgreSQL "/proc/$pid/numa_maps" | sed "s/^/  $pid: /" || true; done
	echo "memory policy of the heap (process policy): leader $(awk '/ heap/ { print $2; exit }' "/proc/$leader/numa_maps"), postmaster $(awk '/ heap/ { print $2; exit }' "/proc/$pm/numa_maps")"
	echo "main segment pages by node (pg_shmem_allocations_numa, all allocations):"
	psql -Atc "SELECT 'N' || numa_node || '=' || (sum(size) / 4096)::bigint FROM pg_shmem_allocations_numa GROUP BY numa_node ORDER BY numa_node" | tr '\n' ' ' | sed 's/^/  /'
	echo
} >"$out/held.txt"
psql -Atc "SELECT pg_cancel_backend($leader)" >/dev/null
kill "$feeder" 2>/dev/null || true
wait "$held" 2>/dev/null || true
cat "$out/held.txt"
[ $bad = 0 ] || { echo "address checks failed (see above)" >&2; exit 1; }
[ ${#pids[@]} = $((workers + 1)) ] || { echo "expected $workers workers, saw ${#pids[@]} participants" >&2; exit 1; }

# ------------------------------------------------------------ measured run
cat >"$out/filter" <<EOF
window join-$setting
main $(printf '0x%s 0x%s' "$main_lo" "$main_hi")
dsmctl $ctl_lo $ctl_hi
dsm $ctl_hi $DSM_HI
kernel 0xffff800000000000 0xffffffffffffffff
EOF
: >"$VM_SCRATCH/workers"
echo "--- measured run" >>"$out/dsmmap.log"
t0=$(date +%s.%N)
"$NM/mark" start
psql -Atc "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $JOIN" >"$out/explain.txt"
"$NM/mark" stop
t1=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" 'BEGIN { printf "measured query (guest clock, under the plugin): %.1f s\n", b - a }' | tee "$out/timing.txt"
cat "$out/explain.txt"
grep -q "Workers Launched: $workers" "$out/explain.txt" || { echo "not all $workers workers launched" >&2; exit 1; }
grep -q "Parallel Hash Join" "$out/explain.txt" || { echo "not a parallel hash join" >&2; exit 1; }
! grep -q '^fallback' "$out/dsmmap.log" || { echo "a DSM segment could not be placed in the range" >&2; exit 1; }
"$BIN/pg_ctl" -D "$D" -m fast stop >/dev/null
grep -E 'could not (interleave|restore)' "$out/server.log" && { echo "placement failures logged" >&2; exit 1; }
exit 0
