#!/usr/bin/env bash
# tools/vm-lopsided-guest.sh: runs inside a vm/run-guest guest with two or
# more NUMA nodes, as the unprivileged user (see tools/vm-lopsided.sh).
#
# For every ARM=BINDIR given, a server with shared_buffers_numa whose
# backends all run on the first node's CPUs (the postmaster is moved there
# with taskset once it has placed its partitions on every node, and its
# children inherit that), and zipfian point reads over a data set larger
# than the pool (and nearly three times that node's share of it): the
# allocations all ask for the first node, and only borrowing the other nodes'
# partitions keeps the whole pool in use.  Prints, per arm, the reads from
# outside the pool per 1000 transactions (pg_stat_database.blks_read) of
# the measured window, and what pg_buffercache_partitions says about it.
# Counts, not timing: the guest's CPU is emulated.
#
# Usage: vm-lopsided-guest.sh TRANSACTIONS ARM=BINDIR...
# (TRANSACTIONS per client, for the warm-up and again for the measure)
set -euo pipefail

xacts=$1
shift
node0=$(numactl --hardware | sed -n 's/^node \([0-9]*\) cpus: [0-9].*/\1/p' | head -n 1)
cpus0=$(cat "/sys/devices/system/node/node$node0/cpulist")
echo "# guest: $(nproc) CPUs; $(numactl --hardware | head -n 1); backends on node $node0"

# the benchmark's zipfian reads (bench/bench.py: s = 1.10, permuted keys)
scale=3
naccounts=$((scale * 100000))
script=$VM_SCRATCH/zipf.sql
cat >"$script" <<EOF
\set r random_zipfian(1, $naccounts, 1.10)
\set aid permute(:r, $naccounts, 5432)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
EOF

for spec in "$@"; do
	arm=${spec%%=*}
	bin=${spec#*=}
	data=$VM_SCRATCH/data-$arm
	export PGHOST=$VM_SCRATCH PGPORT=5440 PGDATABASE=postgres
	"$bin/initdb" -D "$data" -A trust --no-sync >/dev/null
	cat >>"$data/postgresql.conf" <<EOF
shared_buffers = 32MB
shared_buffers_numa = on
huge_pages = off
autovacuum = off
io_method = sync
max_connections = 20
listen_addresses = ''
unix_socket_directories = '$VM_SCRATCH'
port = 5440
EOF
	"$bin/pg_ctl" -D "$data" -l "$VM_SCRATCH/$arm.log" -w start >/dev/null
	taskset -p -c "$cpus0" "$(head -n 1 "$data/postmaster.pid")" >/dev/null
	"$bin/pgbench" -i -q -s "$scale" >/dev/null 2>&1
	"$bin/psql" -X -q -c 'CREATE EXTENSION pg_buffercache' -c 'VACUUM ANALYZE'

	counters() {
		"$bin/psql" -X -At -c "SELECT blks_read FROM pg_stat_database WHERE datname = 'postgres'"
	}
	# warm up: the pool fills and the balancer settles
	"$bin/pgbench" -n -M prepared -f "$script" -c 4 -j 2 -t "$xacts" >/dev/null 2>&1
	"$bin/psql" -X -q -c 'SELECT pg_stat_reset(), pg_buffercache_partitions_reset()' >/dev/null
	sleep 1
	before=$(counters)
	done=$("$bin/pgbench" -n -M prepared -f "$script" -c 4 -j 2 -t "$xacts" 2>/dev/null |
		sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p')
	sleep 1
	after=$(counters)
	awk -v a="$arm" -v r=$((after - before)) -v x="$done" \
		'BEGIN { printf "arm %s: %d transactions, %d reads, %.2f reads per 1000 transactions\n", a, x, r, 1000 * r / x }'
	"$bin/psql" -X -c "SELECT numa_node, sum(allocations) AS allocations,
			round(100 * sum(allocations) / sum(sum(allocations)) OVER (), 1) AS pct,
			max(borrowed_share) AS max_borrowed_share
		  FROM pg_buffercache_partitions GROUP BY numa_node ORDER BY 1" | sed "s/^/    /"
	"$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null
	rm -rf "$data"
done
