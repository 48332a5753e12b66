#!/usr/bin/env bash
# tools/demo.sh: build the series, start a small cluster, put some load on
# it and show what the series adds, then stop the cluster cleanly.
. "$(dirname "$0")/lib.sh"

"$TOP/tools/build.sh"

DEMO=$BUILD/demo
DATA=$DEMO/data
BIN=$BUILD/install/bin
ensure_user_dirs "$DEMO"

# Unix socket paths are limited to ~107 bytes; fall back to /tmp if the
# checkout lives somewhere deep.
SOCK=$DEMO
if [ ${#SOCK} -gt 80 ]; then
	SOCK=$(mktemp -d /tmp/pgnuma-demo.XXXXXX)
	ensure_user_dirs "$SOCK"
fi
export PGHOST=$SOCK PGPORT=$DEMO_PORT PGDATABASE=postgres

pg() { as_user env PGHOST="$PGHOST" PGPORT="$PGPORT" PGDATABASE="$PGDATABASE" "$@"; }
sql() { pg "$BIN/psql" -X -q -v ON_ERROR_STOP=1 -P pager=off "$@"; }

stop_server() {
	if [ -f "$DATA/postmaster.pid" ]; then
		step "stopping the demo server"
		pg "$BIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null || true
	fi
}
stop_server
trap stop_server EXIT

# A cluster from an older build may not be readable by this one (catalog
# changes): recreate it when the server binary is newer than the cluster.
if [ -f "$DATA/PG_VERSION" ] && [ "$BIN/postgres" -nt "$DATA/PG_VERSION" ]; then
	info "binaries changed since the demo cluster was created; recreating it"
	rm -rf "$DATA"
fi
if [ ! -f "$DATA/PG_VERSION" ]; then
	step "creating the demo cluster in ${DATA#$TOP/}"
	rm -rf "$DATA"
	pg "$BIN/initdb" -D "$DATA" -A trust -N --no-instructions >"$DEMO/initdb.log" 2>&1 ||
		{ cat "$DEMO/initdb.log" >&2; die "initdb failed"; }
	cat >>"$DATA/postgresql.conf" <<-EOF

		# demo settings (tools/demo.sh)
		port = $DEMO_PORT
		listen_addresses = ''
		unix_socket_directories = '$SOCK'
		shared_buffers = 128MB
		logging_collector = off
	EOF
	if [ -d /sys/devices/system/node/node0 ]; then
		echo "shared_buffers_numa = on" >>"$DATA/postgresql.conf"
	else
		warn "this machine does not expose NUMA nodes: shared_buffers_numa stays off in the demo"
	fi
	touch "$DATA/PG_VERSION"
	NEW_CLUSTER=1
fi
# The socket directory may differ from the one the cluster was made with.
pg sed -i "s|^unix_socket_directories = .*|unix_socket_directories = '$SOCK'|" "$DATA/postgresql.conf"

step "starting the server (port $DEMO_PORT, log in ${DEMO#$TOP/}/server.log)"
pg "$BIN/pg_ctl" -D "$DATA" -l "$DEMO/server.log" -w start >/dev/null ||
	{ tail -n 20 "$DEMO/server.log" >&2; die "the server did not start" "see $DEMO/server.log"; }

if [ "${NEW_CLUSTER:-0}" = 1 ] || ! sql -tAc "SELECT 1 FROM pg_class WHERE relname = 'pgbench_accounts'" | grep -q 1; then
	step "initialising pgbench tables (scale 10, about 150 MB)"
	pg "$BIN/pgbench" -i -q -s 10 2>&1 | grep -v '^$' | tail -n 2 | sed 's/^/    /'
fi

step "running pgbench: 2 clients, 10 seconds, progress every 2 s"
pg "$BIN/pgbench" -c 2 -j 2 -T 10 -P 2 -n 2>&1 | grep -E 'progress:|^tps|latency average' | sed 's/^/    /'

step "what the series adds"
sql <<-'EOF'
	CREATE EXTENSION IF NOT EXISTS pg_buffercache;
	SELECT name, setting FROM pg_settings
	 WHERE name IN ('shared_buffers_numa', 'shmem_interleave', 'shmem_populate', 'huge_pages_status')
	 ORDER BY name;
	\echo 'Shared memory per NUMA node (pg_shmem_allocations_numa):'
	SELECT numa_node, pg_size_pretty(sum(size)) AS size
	  FROM pg_shmem_allocations_numa
	 WHERE size > 0
	 GROUP BY numa_node ORDER BY numa_node;
	\echo 'Partitions of shared buffers (pg_buffercache_partitions):'
	SELECT * FROM pg_buffercache_partitions;
	\echo 'Where each partition''s buffers are: memory pages per NUMA node (pg_buffercache_numa):'
	SELECT p.partition, p.numa_node AS placed_on, n.numa_node AS page_on_node,
	       count(*) AS os_pages
	  FROM pg_buffercache_partitions p
	  JOIN pg_buffercache_numa n ON n.bufferid BETWEEN p.first_buffer AND p.last_buffer
	 GROUP BY 1, 2, 3 ORDER BY 1, 3;
EOF
