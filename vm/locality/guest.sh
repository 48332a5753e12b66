#!/bin/bash
# vm/locality/guest.sh: the guest half of vm/locality.sh (run in a guest of
# vm/run-guest as the unprivileged user, never by hand on the host).
#
# Usage: guest.sh CONFIG BINDIR OUTDIR LOAD...
#   CONFIG  stock            the server as it is (first touch)
#           stock-interleave the server started under numactl --interleave=all
#           series-interleave shmem_interleave = all (patch 0002)
#           series-numa      shared_buffers_numa = on
#   BINDIR  the installation's bin directory
#   OUTDIR  a shared directory: filter, counters, placement, logs
#   LOAD    the counting windows to run, in this order when named: fill
#           affine uniform seqscan writemix (see vm/locality.sh)
# Environment: LOC_POOL_MB (shared_buffers, default 32), LOC_LOOKUPS (point
# reads or updates per session and window, default 1000), LOC_SESSIONS
# (sessions per node, default 1), LOC_SCANS (seq scans per session, 1),
# LOC_APART (1: every node has two CPUs; the postmaster and its background
# processes run on node 0's second, which the plugin counts apart, and
# each node's sessions on its first).
#
# Each session is a psql that prints its backend's pid, waits for a go file
# and then runs its window's SQL; the backend is moved to its node's CPUs
# (taskset) before the go, so that every access it makes in the window is
# made from that node.  The numamem plugin's filter (written before each
# start marker) splits the main shared memory segment into areas by
# pg_shmem_allocations: blocks (Buffer Blocks), descs (Buffer Descriptors),
# meta (the clock-sweep's own state: Buffer Strategy Status and, with the
# series, its partitions' layout, clock-sweeps, ghosts; before patch 0026
# the trial FIFOs and balance tables were structures of their own),
# main (the rest of the segment).  Everything else is "other".  Each
# structure of meta is an area of its own, meta.NAME (meta.Buffer_Ghosts),
# so that the report can say which of them the accesses go to.
set -euo pipefail

config=$1 BIN=$2 out=$3
shift 3
loads=("$@")
TOP=$(cd "$(dirname "$0")/../.." && pwd)
NM=${NUMAMEM_BUILD:-$TOP/build/numamem}
D=$VM_SCRATCH/data
PORT=5434
POOL_MB=${LOC_POOL_MB:-32}
LOOKUPS=${LOC_LOOKUPS:-1000}
SESSIONS=${LOC_SESSIONS:-1}
SCANS=${LOC_SCANS:-1}
APART=${LOC_APART:-0}
export PGHOST=$VM_SCRATCH PGPORT=$PORT PGDATABASE=postgres

mapfile -t nodes < <(numactl --hardware | sed -n 's/^node \([0-9]*\) cpus: [0-9].*/\1/p')
nnodes=${#nodes[@]}
[ "$nnodes" -ge 1 ] || { echo "no node with CPUs" >&2; exit 1; }
declare -A cpus
for k in "${nodes[@]}"; do cpus[$k]=$(cat "/sys/devices/system/node/node$k/cpulist"); done
if [ "$APART" = 1 ]; then
	# node 0's CPUs are "0-1": the second for the background, the first
	# (of every node) for the sessions
	bg_cpu=$(numactl --hardware | sed -n "s/^node ${nodes[0]} cpus: [0-9]* \([0-9]*\).*/\1/p")
	[ -n "$bg_cpu" ] || { echo "LOC_APART=1: node ${nodes[0]} has no second CPU" >&2; exit 1; }
	for k in "${nodes[@]}"; do cpus[$k]=$(numactl --hardware | sed -n "s/^node $k cpus: \([0-9]*\).*/\1/p"); done
fi

psql() { "$BIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }

# Data sizes follow the pool: about 4,000 rows of 200-byte pads per MiB.
rows_per_mb=4000
t_rows=$((POOL_MB * rows_per_mb / 2 / nnodes)) # all t_k: half the pool
u_rows=$((POOL_MB * rows_per_mb * 35 / 100))   # u: a third of it
s_rows=$((POOL_MB * rows_per_mb * 3 / 2))      # s: 1.5x the pool (scanned through a ring)
w_rows=$((POOL_MB * rows_per_mb / 5))          # w: the write mix's table

printf '%s %s\n' pool_mb "$POOL_MB" lookups "$LOOKUPS" sessions "$SESSIONS" scans "$SCANS" >"$out/params"
[ "$APART" != 1 ] || echo "apart 1" >>"$out/params"
"$BIN/initdb" -D "$D" -A trust --no-sync >"$out/initdb.log" 2>&1
cat >>"$D/postgresql.conf" <<EOF
port = $PORT
listen_addresses = ''
unix_socket_directories = '$VM_SCRATCH'
shared_buffers = ${POOL_MB}MB
huge_pages = off
io_method = sync
max_connections = 40
autovacuum = off
fsync = off
synchronous_commit = off
full_page_writes = off
checkpoint_timeout = 1h
max_wal_size = 4GB
jit = off
EOF
case $config in
	stock | stock-interleave) ;;
	series-interleave) echo "shmem_interleave = 'all'" >>"$D/postgresql.conf" ;;
	series-numa) echo "shared_buffers_numa = on" >>"$D/postgresql.conf" ;;
	*) echo "unknown configuration '$config'" >&2; exit 2 ;;
esac

# The postmaster starts unbound (the series works out its nodes from the
# CPUs it may use) and is then moved to the first node's CPUs, so that
# every backend starts there before its session moves it.  With LOC_APART,
# the postmaster and the processes it has started by then (the background
# writer, checkpointer, WAL writer, ...) are moved to the CPU set apart.
start_server() {
	local pre=()
	[ "$config" != stock-interleave ] || pre=(numactl --interleave=all)
	"${pre[@]}" "$BIN/pg_ctl" -D "$D" -l "$out/server.log" -w start >/dev/null
	pm=$(head -n 1 "$D/postmaster.pid")
	if [ "$APART" = 1 ]; then
		for p in "$pm" $(pgrep -P "$pm"); do taskset -a -p -c "$bg_cpu" "$p" >/dev/null; done
	else
		taskset -a -p -c "${cpus[${nodes[0]}]}" "$pm" >/dev/null
	fi
}
start_server

psql <<EOF
CREATE EXTENSION pg_buffercache;
CREATE EXTENSION pg_prewarm;
$(for k in "${nodes[@]}"; do
	echo "CREATE TABLE t_$k (id int PRIMARY KEY, pad text) WITH (fillfactor = 100);"
	echo "INSERT INTO t_$k SELECT g, repeat('t', 200) FROM generate_series(1, $t_rows) g;"
done)
CREATE TABLE u (id int PRIMARY KEY, pad text);
INSERT INTO u SELECT g, repeat('u', 200) FROM generate_series(1, $u_rows) g;
CREATE TABLE s (id int, pad text);
INSERT INTO s SELECT g, repeat('s', 200) FROM generate_series(1, $s_rows) g;
CREATE TABLE w (id int PRIMARY KEY, v bigint, pad text) WITH (fillfactor = 80);
INSERT INTO w SELECT g, 0, repeat('w', 200) FROM generate_series(1, $w_rows) g;
CREATE TABLE h (id bigint, v bigint, at timestamptz);
VACUUM ANALYZE;
CHECKPOINT;
EOF
psql -At -c "SELECT relname, pg_relation_size(oid) / 8192 FROM pg_class WHERE relname ~ '^(t_[0-9]+|u|s|w)(_pkey)?$' ORDER BY 1" >"$out/relations"

# An empty pool for the first window.
"$BIN/pg_ctl" -D "$D" -m fast -w stop >/dev/null
start_server

# The areas of the main segment: the postmaster's largest shared mapping
# (anonymous shared memory shows as /dev/zero), where every backend maps it.
# The series' placement (mbind) splits it into several entries of
# /proc/PID/maps, one per run of pages with the same policy: contiguous
# entries of one object (device, inode and file offset following on) are
# joined again.
read -r main_lo main_hi < <(perl -ne 'my @f = split; next unless $f[1] =~ /s$/;
	my ($lo, $hi) = map { hex } split /-/, $f[0];
	my ($off, $obj) = (hex $f[2], "$f[3] $f[4]");
	if (@cur && $lo == $cur[1] && $obj eq $cur[2] && $off == $cur[3]) { $cur[1] = $hi; $cur[3] = $off + $hi - $lo }
	else { @cur = ($lo, $hi, $obj, $off + $hi - $lo) }
	if ($cur[1] - $cur[0] > $best) { $best = $cur[1] - $cur[0]; $line = "$cur[0] $cur[1]" }
	END { print "$line\n" }' "/proc/$pm/maps")
total=$(psql -At -c "SELECT sum(allocated_size) FROM pg_shmem_allocations")
[ $((main_hi - main_lo)) -ge "$total" ] || {
	echo "the largest shared mapping of the postmaster ($((main_hi - main_lo)) bytes) is smaller than the main segment ($total bytes)" >&2
	cat "/proc/$pm/maps" >&2
	exit 1
}
psql -At -F ' ' -c "SELECT off, allocated_size, replace(name, ' ', '_') FROM pg_shmem_allocations WHERE off IS NOT NULL ORDER BY off" >"$out/allocations"
perl -e '
	my ($lo, $hi) = @ARGV;
	my %meta = map { $_ => 1 } qw(Buffer_Strategy_Status Buffer_Clock_Sweeps
		Buffer_Trial_FIFO Buffer_Ghosts Buffer_Balance Buffer_Partitions);
	my ($pos, %seen) = ($lo);
	open my $f, "<", "'"$out"'/allocations" or die;
	while (<$f>) {
		my ($off, $size, $name) = split;
		my $area = $name eq "Buffer_Blocks" ? "blocks" :
			$name eq "Buffer_Descriptors" ? "descs" :
			$meta{$name} ? "meta.$name" : next;
		my $a = $lo + $off;
		printf "main 0x%x 0x%x\n", $pos, $a if $a > $pos;
		printf "%s 0x%x 0x%x # %s\n", $area, $a, $a + $size, $name;
		$pos = $a + $size;
		$seen{$area} = 1;
	}
	printf "main 0x%x 0x%x\n", $pos, $hi if $hi > $pos;
	die "no Buffer Blocks or Buffer Descriptors in pg_shmem_allocations\n"
		unless $seen{blocks} && $seen{descs};
' "$main_lo" "$main_hi" >"$out/areas"
echo "# main segment 0x$(printf %x "$main_lo")-0x$(printf %x "$main_hi") of postmaster $pm" >>"$out/areas"

counters() {
	if [[ $config == series-* ]]; then
		psql -At -F ' ' -c "SELECT 'partition', partition, coalesce(numa_node, -1), allocations, served_locally, served_remotely FROM pg_buffercache_partitions ORDER BY partition"
	fi
	psql -At -F ' ' -c "SELECT 'db', blks_read, blks_hit FROM pg_stat_database WHERE datname = current_database()"
}

# session_sql WINDOW NODE SESSION SLOT SLOTS: the SQL of one session of a
# window (SLOT: its number among the window's SLOTS sessions, from 0)
session_sql() {
	local w=$1 k=$2 i=$3 slot=$4 slots=$5 seed
	seed=$(printf '0.%03d%03d' "$k" "$i")
	case $w in
		fill)
			echo "SELECT pg_prewarm('t_$k'), pg_prewarm('t_${k}_pkey');" ;;
		uniform-load)
			echo "SELECT pg_prewarm('u'), pg_prewarm('u_pkey');" ;;
		affine | uniform)
			local tab=u n=$u_rows
			[ "$w" = uniform ] || tab=t_$k n=$t_rows
			echo "SELECT setseed($seed);"
			# the key in a variable: random() in the WHERE clause would be
			# evaluated per row, a sequential scan
			echo "DO \$\$ DECLARE a int; BEGIN FOR i IN 1..$LOOKUPS LOOP a := 1 + floor(random() * $n)::int; PERFORM pad FROM $tab WHERE id = a; END LOOP; END \$\$;" ;;
		seqscan)
			for _ in $(seq "$SCANS"); do echo "SELECT count(*) FROM s WHERE pad IS NOT NULL;"; done ;;
		writemix)
			echo "SELECT setseed($seed);"
			# each session its own rows (w's ids = SLOT modulo SLOTS), so that
			# transactions of 100 updates never deadlock
			echo "DO \$\$ DECLARE a int; BEGIN FOR i IN 1..$LOOKUPS LOOP a := 1 + $slot + $slots * floor(random() * ($w_rows / $slots))::int; UPDATE w SET v = v + 1 WHERE id = a; INSERT INTO h VALUES (a, i, now()); IF i % 100 = 0 THEN COMMIT; END IF; END LOOP; END \$\$;" ;;
		*) echo "unknown window '$w'" >&2; exit 2 ;;
	esac
}

# run_sessions WINDOW COUNT NODE...: SESSIONS sessions on each NODE, each
# moved to its node's CPUs, then all let go at once; with COUNT = yes in a
# counting window of the plugin, with the counters read before and after.
run_sessions() {
	local w=$1 count=$2
	shift 2
	local go=$VM_SCRATCH/go.$w jobs=() files=() k i f pid slot=0 slots=$(($# * SESSIONS))
	rm -f "$go"
	for k in "$@"; do
		for i in $(seq "$SESSIONS"); do
			f=$VM_SCRATCH/$w.$k.$i
			{
				echo "SELECT pg_backend_pid() \\g $f.pid"
				echo "\\! while [ ! -e $go ]; do sleep 0.02; done"
				# the series looks which node a backend runs on every 64
				# allocations: look now, after the move (the assign hook)
				[[ $config != series-* ]] || echo "SET debug_numa_node = -1;"
				session_sql "$w" "$k" "$i" "$slot" "$slots"
			} >"$f.sql"
			slot=$((slot + 1))
			psql -At -f "$f.sql" >"$f.out" 2>&1 &
			jobs+=($!)
			files+=("$f:$k")
		done
	done
	for spec in "${files[@]}"; do
		f=${spec%:*} k=${spec##*:}
		for _ in $(seq 3000); do
			pid=$(cat "$f.pid" 2>/dev/null || true)
			[[ $pid =~ ^[0-9]+$ ]] && break
			sleep 0.1
		done
		[[ $pid =~ ^[0-9]+$ ]] || { echo "window $w: session $f did not start" >&2; cat "$f.out" >&2; exit 1; }
		taskset -p -c "${cpus[$k]}" "$pid" >/dev/null
		echo "$w $k $pid" >>"$out/sessions"
	done
	if [ "$count" = yes ]; then
		counters >"$out/$w.before"
		{ echo "window $w"; grep -v '^#' "$out/areas"; } >"$out/filter"
		sync "$out/filter"
		"$NM/mark" start
	fi
	touch "$go"
	local rc=0
	for j in "${jobs[@]}"; do wait "$j" || rc=1; done
	if [ "$count" = yes ]; then
		"$NM/mark" stop
		counters >"$out/$w.after"
	fi
	if [ $rc != 0 ]; then
		echo "window $w: a session failed" >&2
		cat "$VM_SCRATCH/$w".*.out >&2
		exit 1
	fi
}

# Where each relation's resident pages are (pg_buffercache_numa: 4 kB pages).
placement() {
	psql -At -F ' ' <<'EOF'
SELECT c.relname, n.numa_node, count(*)
FROM pg_buffercache b
JOIN pg_buffercache_numa n USING (bufferid)
JOIN pg_class c ON b.relfilenode = pg_relation_filenode(c.oid)
WHERE b.reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND c.relname ~ '^(t_[0-9]+|u|s|w|h)(_pkey)?$'
GROUP BY 1, 2 ORDER BY 1, 2;
EOF
}

for w in "${loads[@]}"; do
	t0=$(date +%s.%N)
	case $w in
		uniform)
			# loaded by one session on the first node, as pgbench -i or a
			# bulk load would; then read by every node
			run_sessions uniform-load no "${nodes[0]}"
			run_sessions uniform yes "${nodes[@]}" ;;
		fill | affine | seqscan | writemix)
			run_sessions "$w" yes "${nodes[@]}" ;;
		*) echo "unknown window '$w'" >&2; exit 2 ;;
	esac
	t1=$(date +%s.%N)
	placement >"$out/$w.placement"
	awk -v w="$w" -v a="$t0" -v b="$t1" 'BEGIN { printf "%s %.1f\n", w, b - a }' >>"$out/timing"
done
"$BIN/pg_ctl" -D "$D" -m fast -w stop >/dev/null
if grep -E 'PANIC|FATAL|could not (interleave|place|bind)' "$out/server.log" | grep -v 'terminating connection'; then
	echo "the server logged errors" >&2
	exit 1
fi
echo "guest: $config done ($(tr '\n' ' ' <"$out/timing"))"
