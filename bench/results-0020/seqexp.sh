#!/bin/bash
# usage (as the unprivileged user, after bench/bench.sh built the arms): seqexp.sh ARM "extra -c settings" seconds
ARM=$1; EXTRA=$2; SECS=${3:-40}
NUMA=$([ "$1" = stock ] || echo "-c shared_buffers_numa=on")
B=/work/main/build/bench/$ARM/install/bin
D=/work/main/build/bench/data/cluster
S=/tmp/seqexp
$B/pg_ctl -D $D -w -l $S/log-$ARM.txt -o "-c shared_buffers=128MB -c listen_addresses='' -c max_connections=40 $NUMA -c autovacuum=off -c io_method=sync -c jit=off -c checkpoint_timeout=1h -c max_wal_size=20GB -c unix_socket_directories=$S $EXTRA" start >/dev/null
$B/psql -X -q -h $S -d seq128 -c "CREATE EXTENSION IF NOT EXISTS pg_buffercache" 2>/dev/null
$B/psql -X -q -h $S -d seq128 -c "SELECT pg_buffercache_partitions_reset()" >/dev/null 2>&1
$B/psql -X -q -h $S -d seq128 -c "SELECT pg_stat_reset()" >/dev/null
echo 'SELECT count(*) FROM pgbench_accounts;' > $S/seq.sql
PGOPTIONS="-c enable_indexonlyscan=off -c enable_indexscan=off -c enable_bitmapscan=off" $B/pgbench -h $S -n -c 8 -j 8 -T $SECS -f $S/seq.sql seq128 > $S/pgb.txt 2>&1 &
PGB=$!
for i in $(seq 1 $((SECS/10))); do sleep 10;
$B/psql -X -h $S -d seq128 -At -c "SELECT string_agg(format('p%s tgt=%s len=%s', p.partition, trial_target, c.fifo_length), ' ' ORDER BY p.partition) FROM pg_buffercache_partitions p JOIN pg_buffercache_trial_check() c USING (partition)"
done
wait $PGB
$B/psql -X -h $S -d seq128 -At -c "SELECT 'reads per scan', round(blks_read::numeric / $(grep -o "processed: [0-9]*" $S/pgb.txt | cut -d" " -f2 || echo 1), 1), blks_read FROM pg_stat_database WHERE datname = current_database()"
grep -E "number of transactions actually|tps" $S/pgb.txt | head -2
$B/psql -X -h $S -d seq128 -At -c "SELECT sum(allocations), sum(trial_victims), sum(hand_victims), sum(forced_victims), sum(empty_victims), sum(trial_ghost_hits), sum(hand_ghost_hits), round(sum(clock_advances)::numeric/sum(allocations),2) FROM pg_buffercache_partitions"
$B/psql -X -q -h $S -d seq128 -c "DROP EXTENSION pg_buffercache" 2>/dev/null
$B/pg_ctl -D $D -w -m fast stop >/dev/null
