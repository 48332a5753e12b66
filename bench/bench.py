#!/usr/bin/python3
"""bench/bench.py: run the workloads against every arm and write the report.

Run by bench/bench.sh as the unprivileged user, after it has built the arms:

    bench.py --mode full|quick --out DIR --data DIR --huge-pages on|off \\
             --command "make bench" ARM=BINDIR [ARM=BINDIR ...]

The first arm is the reference (stock).  An arm NAME@GUC=VALUE[,...] is the
build of NAME run with those settings (the rule's frontier, on the mode's
frontier workloads only).  An arm named pristine (18.6 without the counters
patch) is measured by callgrind only.  Three measurements:

1. capacity (every workload): one cluster (initdb'd by the reference arm)
   holds every data set, so every arm reads the very same pages.  For every
   run and workload, the arms in a random order (seeded per run), each: start
   the server, prewarm, warm up with the workload, reset the counters,
   measure, stop.  Misses per transaction, hit ratios, the clock-sweep's
   work, writes by context; medians over the runs.
2. throughput (paired.py): the reference, a second copy of the reference
   (A/A control) and the last series arm run side by side, warm, and short
   windows alternate between them; mean log ratio with a 95% bootstrap
   interval.
3. cost (callgrind.py): instructions per query of one backend under
   callgrind, the marginal cost between two script lengths.

Every arm is driven by the reference arm's pgbench and psql, so that client
differences cannot show up as server differences.  Every measurement goes
to CSV files in DIR (runs.csv, paired.csv, callgrind.csv); report.py writes
REPORT.md and the plots from them.
"""

import argparse
import csv
import datetime
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import time

MB = 1024 * 1024
PAGE = 8192
# pgbench_accounts heap and primary key pages per unit of scale (18.x, default
# fillfactor), measured: 1640 heap pages and 276 index pages.
PAGES_PER_SCALE = 1640 + 276
ZIPF_S = 1.10
PERMUTE_SEED = 5432

MODES = {
    # full: the report's numbers.
    "full": dict(
        runs=3, warmup=10, measure=15,
        workloads=[
            ("zipf", 128), ("zipf", 256), ("zipf", 512), ("zipfio", 128),
            ("lopsided", 128), ("scan", 512), ("select", 512), ("write", 128),
            ("writerate", 128), ("tpcb", 128), ("churn", 128),
            ("seqcount1", 128), ("seqcount8", 128),
            ("seqoffset1", 128), ("seqoffset8", 128),
        ],
        frontier_workloads=[("zipf", 128), ("seqcount8", 128)],
        paired=[("zipf", 128), ("zipf", 512), ("select", 512),
                ("seqcount1", 128), ("seqcount8", 128),
                ("seqoffset1", 128), ("seqoffset8", 128)],
        rounds=15, window=5,
        callgrind=["hit", "evict", "evict_stride", "seqscan"], callgrind_k=10000),
    # quick: a smoke run of the whole pipeline, cheap enough for CI.  One
    # run is no basis for a claim; the report says so.
    "quick": dict(
        runs=1, warmup=3, measure=5,
        workloads=[("zipf", 128), ("lopsided", 128), ("scan", 128), ("write", 128),
                   ("writerate", 128), ("churn", 128), ("seqcount8", 32)],
        frontier_workloads=[],
        paired=[("zipf", 128)], rounds=3, window=2,
        callgrind=["hit"], callgrind_k=200),
}

CLIENTS = 8             # enough to keep both cores busy
THREADS = 2
SCAN_CLIENTS = 2        # of the scan workload: one-touch scans
SCAN_TABLES = 16
SCAN_TABLE_FRACTION = 0.12  # of shared_buffers: under 1/4, so no ring; 16 of
#                             them are ~1.9 pools, so a table is never re-read
#                             while its pages are resident
SELECT_FRACTION = 0.60      # pgbench -S data set, of shared_buffers
WRITE_CLIENTS = 6           # tpcb-like clients of the write workload
# writerate: the write mix at a fixed rate, the same for every arm, so that
# what the pool writes per transaction is compared at the same work per
# second (in the write mix, the background writer cleans at most
# bgwriter_lru_maxpages a round in every arm, and an arm that runs faster
# leaves more of the writes to its backends).  Well under what every arm
# does unlimited here (tpcb-like: 730 tps and more; COPY: 2.7/s and more).
WRITE_RATE_TPCB = 500       # tpcb-like transactions per second, all clients
WRITE_RATE_COPY = 2         # COPYs (with their TRUNCATE) per second
WRITE_MIX = ("write", "writerate")
SEQ_FRACTION = 1.5          # seq scan workloads: pgbench_accounts, of the pool
SEQ_PARTITIONS = 8          # ... in 8 partitions, each under a quarter of
#                             the pool: the scans use no ring, as in the thread
LOPSIDED_PARTITION = 0      # lopsided: every session's home partition
COPY_ROWS = 400000          # rows per COPY of the write workload (~40 MB)
TPCB_FRACTION = 3.5         # tpcb workload: pgbench's data, of the pool, as a
#                             user trying the default workload on a small pool
CHURN_CLIENTS = 2           # of the churn workload: create, fill, drop tables
CHURN_ROWS = 20000          # rows per churn table (~2.6 MB)

PORT = 55499
PAIRED_PORT = 55510


def log(msg):
    print(msg, flush=True)


class Arm:
    """An arm: a build, and for NAME@GUC=VALUE[,GUC=VALUE...], the same build
    with those settings (the rule's frontier, frontier workloads only)."""

    def __init__(self, key, bindir):
        self.key = key
        self.name, _, spec = key.partition("@")
        self.settings = {}
        for item in filter(None, spec.split(",")):
            guc, eq, value = item.partition("=")
            if not eq:
                raise SystemExit("arm %s: expected GUC=VALUE after @, got %r" % (key, item))
            self.settings[guc] = value
        self.frontier = bool(self.settings)
        self.bindir = bindir
        label = os.path.join(os.path.dirname(os.path.dirname(bindir)), "label")
        self.label = open(label).read().strip() if os.path.exists(label) else self.name
        if self.settings:
            self.label += ", " + ", ".join("%s = %s" % kv for kv in self.settings.items())
        self.series = self.name not in ("stock", "pristine")
        # pristine 18.6 (no counters patch) is measured by callgrind only:
        # it has none of the counters the capacity runs read
        self.cost_only = self.name == "pristine"

    def bin(self, prog):
        return os.path.join(self.bindir, prog)


class Cluster:
    """A data directory and the port its server listens on.  Client programs
    (psql, pgbench) are always the reference arm's."""

    def __init__(self, pgdata, sockdir, port, client, logfile):
        self.pgdata = pgdata
        self.sockdir = sockdir
        self.port = port
        self.client = client
        self.logfile = logfile

    def run(self, arm, args, **kw):
        r = subprocess.run([arm.bin(args[0])] + args[1:], text=True,
                           capture_output=True, **kw)
        if r.returncode != 0:
            raise RuntimeError("%s failed (exit %d):\n%s%s" % (
                " ".join([args[0]] + args[1:]), r.returncode, r.stdout, r.stderr))
        return r

    def psql(self, sql, db="postgres"):
        r = self.run(self.client, ["psql", "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1",
                                   "-h", self.sockdir, "-p", str(self.port), "-d", db,
                                   "-c", sql])
        return r.stdout.strip()

    def start(self, arm, settings):
        settings = dict(settings, port=self.port, unix_socket_directories=self.sockdir)
        opts = " ".join("-c %s=%s" % (k, v) for k, v in settings.items())
        try:
            self.run(arm, ["pg_ctl", "-w", "-t", "300", "-D", self.pgdata,
                           "-l", self.logfile, "-o", opts, "start"])
        except RuntimeError:
            sys.stderr.write(open(self.logfile).read()[-3000:])
            raise

    def stop(self, arm):
        self.run(arm, ["pg_ctl", "-w", "-t", "300", "-D", self.pgdata,
                       "-m", "fast", "stop"])


def base_settings(huge_pages):
    return {
        "listen_addresses": "''",
        "max_connections": 40,
        "huge_pages": huge_pages,
        "autovacuum": "off",
        "io_method": "sync",
        "checkpoint_timeout": "1h",
        "max_wal_size": "20GB",
        "track_io_timing": "off",
        "jit": "off",
    }


def workload_settings(args, arm, wl, pool):
    s = base_settings(args.huge_pages)
    s["shared_buffers"] = "%dMB" % pool
    if arm.series:
        s["shared_buffers_numa"] = "on"
    if wl == "zipfio":
        # every miss is a read from the device, not a copy from the OS cache
        s["debug_io_direct"] = "data"
    if wl in WRITE_MIX:
        # reads and writes per kind of work (write_kinds()), in every arm
        s["shared_preload_libraries"] = "pg_stat_statements"
    s.update(arm.settings)
    return s


def scale_for(pool_mb, fraction):
    return max(1, round(fraction * pool_mb * MB / PAGE / PAGES_PER_SCALE))


def seq_workload(wl):
    """(query, clients) of a seq scan workload, or None."""
    m = re.match(r"seq(count|offset)(\d+)$", wl)
    return (m.group(1), int(m.group(2))) if m else None


def dataset_of(wl, pool):
    """(database, pgbench scale, scan tables' MB) of a workload.  The seq*
    databases hold a partitioned pgbench_accounts (SEQ_PARTITIONS)."""
    if seq_workload(wl):
        return "seq%d" % pool, scale_for(pool, SEQ_FRACTION), 0
    if wl == "select":
        return "fit%d" % pool, scale_for(pool, SELECT_FRACTION), 0
    if wl == "tpcb":
        return "tpcb%d" % pool, scale_for(pool, TPCB_FRACTION), 0
    scan_mb = int(pool * SCAN_TABLE_FRACTION) if wl == "scan" else 0
    return "zipf%d" % pool, scale_for(pool, 1.15), scan_mb


def datasets(workloads):
    """Databases the workloads need: name -> (pgbench scale, scan tables MB)."""
    need = {}
    for wl, pool in workloads:
        db, scale, scan_mb = dataset_of(wl, pool)
        old = need.get(db, (0, 0))
        need[db] = (scale, max(old[1], scan_mb))
    return need


def copy_file(args):
    return os.path.join(args.data, "copy.csv")


def load_datasets(args, cluster, need):
    """initdb if needed, load the data sets that are not there yet."""
    ref = args.arms[0]
    stamp = os.path.join(cluster.pgdata, "bench-datasets")
    if not os.path.exists(os.path.join(cluster.pgdata, "PG_VERSION")):
        log("  initdb %s (%s)" % (cluster.pgdata, ref.name))
        shutil.rmtree(cluster.pgdata, ignore_errors=True)
        cluster.run(ref, ["initdb", "-D", cluster.pgdata, "-A", "trust", "-N"])
        open(stamp, "w").close()
    # the stamp lists the loads done, the last line per database wins
    have = {}
    for line in open(stamp).read().split():
        db, scale, scan_mb = line.split(":")
        have[db] = (int(scale), int(scan_mb))

    def loaded(db, scale, scan_mb):
        return db in have and have[db][0] == scale and \
            (scan_mb == 0 or have[db][1] == scan_mb)
    todo = {k: v for k, v in need.items() if not loaded(k, *v)}
    if not todo:
        return
    if not os.path.exists(copy_file(args)):
        with open(copy_file(args), "w") as f:
            for i in range(1, COPY_ROWS + 1):
                f.write("%d\t%s\n" % (i, "c" * 90))
    settings = base_settings("off")
    settings.update({"shared_buffers": "1GB", "fsync": "off",
                     "maintenance_work_mem": "512MB",
                     "synchronous_commit": "off"})
    cluster.start(ref, settings)
    try:
        for db, (scale, scan_mb) in sorted(todo.items()):
            t0 = time.time()
            log("  loading %s: pgbench scale %d%s" % (
                db, scale, ", %d scan tables of %d MB" % (SCAN_TABLES, scan_mb)
                if scan_mb else ""))
            cluster.psql("DROP DATABASE IF EXISTS %s" % db)
            cluster.psql("CREATE DATABASE %s" % db)
            parts = (["--partitions=%d" % SEQ_PARTITIONS]
                     if db.startswith("seq") else [])
            cluster.run(ref, ["pgbench", "-i", "-q", "-s", str(scale)] + parts +
                        ["-h", cluster.sockdir, "-p", str(cluster.port), db])
            cluster.psql("CREATE TABLE copyt (id int, pad text); "
                         "CREATE SEQUENCE scan_seq", db)
            if scan_mb:
                # ~ 36 rows of 200 bytes per page
                rows = scan_mb * MB // PAGE * 36
                for i in range(1, SCAN_TABLES + 1):
                    cluster.psql("CREATE TABLE scan_%d AS SELECT g AS id, "
                                 "repeat('x', 200) AS pad "
                                 "FROM generate_series(1, %d) g" % (i, rows), db)
            cluster.psql("VACUUM ANALYZE", db)
            cluster.psql("CHECKPOINT")
            with open(stamp, "a") as f:
                f.write("%s:%d:%d\n" % (db, scale, scan_mb))
            log("    done in %.0f s" % (time.time() - t0))
    finally:
        cluster.stop(ref)


def warm_os_cache(pgdata):
    """Read every data file once, so that no arm pays for a cold page cache."""
    for root, _, files in os.walk(os.path.join(pgdata, "base")):
        for f in files:
            with open(os.path.join(root, f), "rb") as fh:
                while fh.read(1 << 20):
                    pass


def write_scripts(args):
    sdir = os.path.join(args.out, "scripts")
    os.makedirs(sdir, exist_ok=True)
    with open(os.path.join(sdir, "zipf.sql"), "w") as f:
        f.write("\\set r random_zipfian(1, :naccounts, %.2f)\n" % ZIPF_S)
        f.write("\\set aid permute(:r, :naccounts, %d)\n" % PERMUTE_SEED)
        f.write("SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n")
    with open(os.path.join(sdir, "scan.sql"), "w") as f:
        # the tables in turn, for all clients together: a table comes round
        # again only after the others, ~1.8 pools, have been read
        f.write("SELECT nextval('scan_seq') %% %d + 1 AS n \\gset\n" % SCAN_TABLES)
        f.write("SELECT count(*) FROM scan_:n;\n")
    with open(os.path.join(sdir, "seqcount.sql"), "w") as f:
        f.write("SELECT count(*) FROM pgbench_accounts;\n")
    with open(os.path.join(sdir, "seqoffset.sql"), "w") as f:
        # every row is read and projected, none returned
        f.write("SELECT * FROM pgbench_accounts OFFSET 1000000000;\n")
    with open(os.path.join(sdir, "copy.sql"), "w") as f:
        f.write("COPY copyt FROM '%s';\n" % copy_file(args))
        f.write("TRUNCATE copyt;\n")
    with open(os.path.join(sdir, "churn.sql"), "w") as f:
        # a table of the client's own, filled and emptied both ways: DROP
        # and TRUNCATE empty its buffers, which allocations should reuse
        # before they evict the point reads' pages
        for empty in ("TRUNCATE", "DROP TABLE"):
            f.write("CREATE TABLE IF NOT EXISTS churn_:client_id (a int, b text);\n")
            f.write("INSERT INTO churn_:client_id SELECT g, repeat('x', 100) "
                    "FROM generate_series(1, %d) g;\n" % CHURN_ROWS)
            f.write("%s churn_:client_id;\n" % empty)
    with open(os.path.join(sdir, "vacuum.sql"), "w") as f:
        f.write("VACUUM pgbench_accounts;\n")
        f.write("SELECT pg_sleep(0.5);\n")
    return sdir


def setup_counters(cluster, arm):
    """bench_counters() and bench_reset() in the postgres database, the same
    columns for every arm: the series' pg_buffercache_partitions, or the
    functions of bench/stock-counters.patch."""
    cluster.psql("DROP EXTENSION IF EXISTS pg_buffercache CASCADE; "
                 "DROP FUNCTION IF EXISTS bench_counters(); "
                 "DROP FUNCTION IF EXISTS bench_reset(); "
                 "CREATE EXTENSION pg_buffercache")
    out = ("OUT allocations bigint, OUT clock_advances bigint, "
           "OUT max_clock_advances bigint, OUT forced_victims bigint")
    if arm.series:
        has_forced = cluster.psql(
            "SELECT count(*) FROM pg_attribute WHERE "
            "attrelid = 'pg_buffercache_partitions'::regclass "
            "AND attname = 'forced_victims'") == "1"
        cluster.psql("""
CREATE FUNCTION bench_counters(%s) LANGUAGE sql AS $$
  SELECT sum(allocations)::bigint, sum(clock_advances)::bigint,
         max(max_clock_advances)::bigint, %s
    FROM pg_buffercache_partitions $$;
CREATE FUNCTION bench_reset() RETURNS void LANGUAGE sql AS
  $$ SELECT pg_buffercache_partitions_reset() $$;
""" % (out, "sum(forced_victims)::bigint" if has_forced else "0::bigint"))
    else:
        cluster.psql("""
CREATE FUNCTION bench_counters(%s) LANGUAGE c
  AS '$libdir/pg_buffercache', 'pg_buffercache_bench_counters';
CREATE FUNCTION bench_reset() RETURNS void LANGUAGE c
  AS '$libdir/pg_buffercache', 'pg_buffercache_bench_reset';
""" % out)


def db_stats(cluster, db):
    hit, read = cluster.psql("SELECT blks_hit, blks_read FROM pg_stat_database "
                             "WHERE datname = '%s'" % db).split("|")
    hot = cluster.psql("SELECT coalesce(sum(heap_blks_hit), 0) + "
                       "coalesce(sum(idx_blks_hit), 0), "
                       "coalesce(sum(heap_blks_read), 0) + coalesce(sum(idx_blks_read), 0) "
                       "FROM pg_statio_user_tables "
                       "WHERE relname ~ '^pgbench_accounts(_[0-9]+)?$'",
                       db).split("|")
    return int(hit), int(read), int(hot[0]), int(hot[1])


IO_WRITES = [
    ("w_backend_normal", "client backend", "normal"),
    ("w_backend_bulkwrite", "client backend", "bulkwrite"),
    ("w_backend_vacuum", "client backend", "vacuum"),
    ("w_backend_bulkread", "client backend", "bulkread"),
    ("w_bgwriter", "background writer", None),
    ("w_checkpointer", "checkpointer", None),
]


def io_writes(cluster):
    rows = cluster.psql("SELECT backend_type, context, coalesce(sum(writes), 0) "
                        "FROM pg_stat_io WHERE object = 'relation' GROUP BY 1, 2")
    got = {}
    for line in rows.splitlines():
        bt, ctx, w = line.split("|")
        got[(bt, ctx)] = int(w)
    res = {}
    for name, bt, ctx in IO_WRITES:
        res[name] = sum(v for (b, c), v in got.items()
                        if b == bt and (ctx is None or c == ctx))
    return res


# The kinds of work of the write workload, in the order of its pgbench
# commands (workload_commands()), and how to tell their statements apart in
# pg_stat_statements: the tpcb-like transactions, the COPYs (with the
# TRUNCATE after each), the VACUUMs (with the sleep after each).
WRITE_KINDS = [
    ("tpcb", None),
    ("copy", r"^\s*(COPY|TRUNCATE)\M"),
    ("vacuum", r"^\s*(VACUUM|SELECT pg_sleep)\M"),
]


def write_kinds(cluster, db, outs):
    """Per kind of work of the write workload: its transactions, the pages its
    statements read (misses) and the pages its backends wrote, from
    pg_stat_statements, reset when the measurement started.  So that each
    kind's reads and writes are per its own transactions: COPY and VACUUM
    take a share of the run that changes with its speed, and their reads
    would blur the tpcb-like transactions' misses."""
    case = " ".join("WHEN query ~* '%s' THEN '%s'" % (rx, k)
                    for k, rx in WRITE_KINDS if rx)
    got = {}
    for line in cluster.psql(
            "SELECT CASE %s ELSE 'tpcb' END, sum(shared_blks_read), "
            "sum(shared_blks_written) FROM pg_stat_statements "
            "WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '%s') "
            "GROUP BY 1" % (case, db), db).splitlines():
        k, r, w = line.split("|")
        got[k] = (int(r), int(w))
    res = {}
    for (k, _), out in zip(WRITE_KINDS, outs):
        res["tx_" + k] = parse_pgbench(out)[2]
        res["r_" + k], res["wb_" + k] = got.get(k, (0, 0))
    return res


def pgbench_cmd(args, cluster, db, script_args, clients, threads, seconds, seed,
                env=None):
    """A pgbench command line; env: variables for it (through env(1))."""
    pre = ["env"] + ["%s=%s" % kv for kv in env.items()] if env else []
    return (pre + [args.arms[0].bin("pgbench"), "-n", "-h", cluster.sockdir,
                   "-p", str(cluster.port), "-c", str(clients), "-j", str(threads),
                   "-T", str(seconds), "--random-seed=%d" % seed] + script_args + [db])


def has_setting(cluster, name):
    return cluster.psql("SELECT count(*) FROM pg_settings WHERE name = '%s'" % name) == "1"


def median_latency_ms(prefix):
    """The median transaction latency of the pgbench logs prefix.*, in ms."""
    lat = []
    d, base = os.path.split(prefix)
    for f in os.listdir(d):
        if f.startswith(base + "."):
            with open(os.path.join(d, f)) as fh:
                lat += [int(line.split()[2]) for line in fh if line.strip()]
            os.unlink(os.path.join(d, f))
    lat.sort()
    return lat[len(lat) // 2] / 1000.0 if lat else 0.0


def parse_pgbench(out):
    tps = re.search(r"tps = ([0-9.]+) \(without initial connection time\)", out)
    lat = re.search(r"latency average = ([0-9.]+) ms", out)
    txn = re.search(r"number of transactions actually processed: (\d+)", out)
    if not tps:
        raise RuntimeError("cannot parse pgbench output:\n" + out)
    return (float(tps.group(1)), float(lat.group(1)) if lat else 0.0,
            int(txn.group(1)) if txn else 0)


def workload_commands(args, wl, pool, cluster, seconds, seed, log_prefix=None):
    """The pgbench processes of one workload: (db, main, [concurrent ones]).
    The main one's transactions are the ones misses are counted against.
    log_prefix: where the seq scan workloads log every transaction."""
    sdir = args.sdir
    db, scale, _ = dataset_of(wl, pool)
    seq = seq_workload(wl)
    if seq:
        query, clients = seq
        logs = ["-l", "--log-prefix=%s" % log_prefix] if log_prefix else []
        # a seq scan, not an index-only scan of the primary key
        env = {"PGOPTIONS": "-c enable_indexonlyscan=off -c enable_indexscan=off "
                            "-c enable_bitmapscan=off"}
        return db, pgbench_cmd(args, cluster, db,
                               ["-M", "simple", "-f",
                                os.path.join(sdir, "seq%s.sql" % query)] + logs,
                               clients, min(clients, THREADS), seconds, seed, env), []
    if wl == "select":
        return db, pgbench_cmd(args, cluster, db, ["-S", "-M", "prepared"],
                               CLIENTS, THREADS, seconds, seed), []
    zipf = ["-M", "prepared", "-D", "naccounts=%d" % (scale * 100000),
            "-f", os.path.join(sdir, "zipf.sql")]
    if wl in ("zipf", "zipfio"):
        return db, pgbench_cmd(args, cluster, db, zipf, CLIENTS, THREADS,
                               seconds, seed), []
    if wl == "lopsided":
        # zipf, every session homed in one partition, where the arm can
        # (debug_buffer_partition); the others run plain zipf
        env = ({"PGOPTIONS": "-c debug_buffer_partition=%d" % LOPSIDED_PARTITION}
               if has_setting(cluster, "debug_buffer_partition") else None)
        return db, pgbench_cmd(args, cluster, db, zipf, CLIENTS, THREADS,
                               seconds, seed, env), []
    if wl == "scan":
        # the hot set with fewer clients, plus one-touch scans
        scan = ["-M", "simple", "-f", os.path.join(sdir, "scan.sql")]
        return db, pgbench_cmd(args, cluster, db, zipf, CLIENTS - SCAN_CLIENTS,
                               1, seconds, seed), \
            [pgbench_cmd(args, cluster, db, scan, SCAN_CLIENTS, 1, seconds, seed + 1)]
    if wl == "tpcb":
        # pgbench's default, as a user would try it, through a pool well
        # below the data
        return db, pgbench_cmd(args, cluster, db, ["-M", "prepared"],
                               CLIENTS, THREADS, seconds, seed), []
    if wl == "churn":
        # the zipfian point reads with fewer clients, plus tables created,
        # filled and emptied alongside
        return db, pgbench_cmd(args, cluster, db, zipf, CLIENTS - CHURN_CLIENTS,
                               1, seconds, seed), \
            [pgbench_cmd(args, cluster, db, ["-M", "simple", "-f",
                                             os.path.join(sdir, "churn.sql")],
                         CHURN_CLIENTS, 1, seconds, seed + 1)]
    if wl in WRITE_MIX:
        # tpcb-like updates, with a COPY (bulk write ring) and a VACUUM
        # (vacuum ring) running alongside; in writerate, at a fixed rate (the
        # same seed gives every arm the same schedule), the VACUUMs' pace
        # set by their sleep in both
        fixed = wl == "writerate"
        tpcb_rate = ["-R", str(WRITE_RATE_TPCB)] if fixed else []
        copy_rate = ["-R", str(WRITE_RATE_COPY)] if fixed else []
        return db, pgbench_cmd(args, cluster, db, ["-M", "prepared"] + tpcb_rate,
                               WRITE_CLIENTS, 1, seconds, seed), \
            [pgbench_cmd(args, cluster, db, ["-f", os.path.join(sdir, "copy.sql")] +
                         copy_rate, 1, 1, seconds, seed + 1),
             pgbench_cmd(args, cluster, db, ["-f", os.path.join(sdir, "vacuum.sql")],
                         1, 1, seconds, seed + 2)]
    raise ValueError(wl)


def run_pgbench(cmds):
    """Run the pgbench commands at the same time; their outputs."""
    import paired
    return paired.run_concurrently(cmds)


def partition_counters(cluster, arm):
    """Per partition: (buffers, allocations, complete passes), or None when the
    arm has no per-partition hands to compare (stock; complete_passes came
    with them)."""
    if not arm.series or cluster.psql(
            "SELECT count(*) FROM pg_attribute WHERE attrelid = "
            "'pg_buffercache_partitions'::regclass "
            "AND attname = 'complete_passes'") != "1":
        return None
    return [tuple(int(x) for x in line.split("|")) for line in cluster.psql(
        "SELECT num_buffers, allocations, complete_passes "
        "FROM pg_buffercache_partitions ORDER BY partition").splitlines()]


# Where the victims came from, and those of them the allocating backend
# wrote out itself, summed over the partitions (the series' counters, reset
# with the others at the start of the window; stock has none).
VICTIM_SOURCES = ["empty_victims", "trial_victims", "hand_victims", "forced_victims",
                  "trial_victims_written", "hand_victims_written",
                  "forced_victims_written"]


def victim_sources(cluster, arm):
    """Column -> sum over the partitions, of VICTIM_SOURCES; empty when the arm
    does not count them."""
    if not arm.series or cluster.psql(
            "SELECT count(*) FROM pg_attribute WHERE attrelid = "
            "'pg_buffercache_partitions'::regclass "
            "AND attname = 'trial_victims_written'") != "1":
        return {}
    vals = cluster.psql("SELECT " + ", ".join(
        "sum(%s)::bigint" % c for c in VICTIM_SOURCES) +
        " FROM pg_buffercache_partitions").split("|")
    return {"v_" + c: int(v) for c, v in zip(VICTIM_SOURCES, vals)}


def partition_spread(p0, p1, seconds):
    """How evenly the partitions worked during the measurement: allocations per
    buffer and hand passes per minute, their smallest and largest over the
    partitions (the allocation counters were reset in between)."""
    if not p0 or not p1:
        return dict(alloc_spread=0.0, passes_min=0.0, passes_max=0.0)
    per_buffer = [a / n for (n, a, _) in p1]
    passes = [60.0 * (b[2] - a[2]) / seconds for a, b in zip(p0, p1)]
    return dict(
        alloc_spread=max(per_buffer) / min(per_buffer) if min(per_buffer) > 0 else 0.0,
        passes_min=min(passes), passes_max=max(passes))


def measure(args, arm, cluster, wl, pool, run):
    conf = args.conf
    cluster.start(arm, workload_settings(args, arm, wl, pool))
    try:
        setup_counters(cluster, arm)
        seed = 1000 + run
        db, main, others = workload_commands(args, wl, pool, cluster, conf["warmup"], seed)
        if not seq_workload(wl):
            cluster.psql("CREATE EXTENSION IF NOT EXISTS pg_prewarm", db)
            tables = ["pgbench_accounts", "pgbench_accounts_pkey"]
            cluster.psql("SELECT " + ", ".join("pg_prewarm('%s')" % t for t in tables), db)
        run_pgbench([main] + others)
        time.sleep(1)
        s0 = db_stats(cluster, db)
        if wl in WRITE_MIX:
            cluster.psql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements; "
                         "SELECT pg_stat_statements_reset()", db)
        cluster.psql("SELECT bench_reset(), pg_stat_reset_shared('io')")
        parts0 = partition_counters(cluster, arm)
        log_prefix = os.path.join(args.data, "pgbench-log")
        db, main, others = workload_commands(args, wl, pool, cluster, conf["measure"],
                                             seed + 100, log_prefix)
        outs = run_pgbench([main] + others)
        time.sleep(1)  # let the pgbench backends' statistics be flushed
        s1 = db_stats(cluster, db)
        parts1 = partition_counters(cluster, arm)
        median_ms = median_latency_ms(log_prefix) if seq_workload(wl) else 0.0
        allocs, advances, max_adv, forced = (
            int(x) for x in cluster.psql("SELECT * FROM bench_counters()").split("|"))
        writes = io_writes(cluster)
        writes.update(victim_sources(cluster, arm))
        if wl in WRITE_MIX:
            writes.update(write_kinds(cluster, db, outs))
        nb = int(cluster.psql("SELECT setting FROM pg_settings WHERE name = 'shared_buffers'"))
        huge = cluster.psql("SHOW huge_pages_status")
    finally:
        cluster.stop(arm)
    tps, lat, txn = parse_pgbench(outs[0])
    hit, read = s1[0] - s0[0], s1[1] - s0[1]
    hhit, hread = s1[2] - s0[2], s1[3] - s0[3]
    # misses of the main clients' data: the whole database, except in the
    # scan workload, where the scans' own reads are not the point
    misses = hread if wl == "scan" else read
    row = dict(
        run=run, workload=wl, pool_mb=pool, arm=arm.key, nbuffers=nb,
        huge_pages=huge, tps=tps, latency_ms=lat, transactions=txn,
        allocations=allocs, advances=advances, max_advances=max_adv,
        forced_victims=forced,
        adv_per_victim=advances / allocs if allocs else 0.0,
        blks_hit=hit, blks_read=read, hot_blks_hit=hhit, hot_blks_read=hread,
        misses_per_ktx=1000.0 * misses / txn if txn else 0.0,
        hit_pct=100.0 * hit / (hit + read) if hit + read else 100.0,
        hot_hit_pct=100.0 * hhit / (hhit + hread) if hhit + hread else 100.0,
        scans_per_s=parse_pgbench(outs[1])[0] if wl == "scan" else 0.0,
        median_latency_ms=median_ms,
    )
    row.update(partition_spread(parts0, parts1, conf["measure"]))
    row.update(writes)
    return row


def capacity(args, arms, cluster):
    conf = args.conf
    plan = []
    for run in range(1, conf["runs"] + 1):
        for wl, pool in conf["workloads"]:
            these = [a for a in arms if not a.cost_only and
                     (not a.frontier or (wl, pool) in conf["frontier_workloads"])]
            random.Random(run * 7919 + pool).shuffle(these)
            plan += [(run, wl, pool, a) for a in these]
    rows = []
    t0 = time.time()
    for i, (run, wl, pool, arm) in enumerate(plan, 1):
        row = measure(args, arm, cluster, wl, pool, run)
        rows.append(row)
        elapsed = time.time() - t0
        eta = elapsed / i * (len(plan) - i)
        log("[%d/%d] run %d %s %dMB %-28s tps %8.0f  misses/ktx %7.2f  adv/victim %5.2f  "
            "tail %6d  forced %d%s  (eta %dm%02ds)" % (
                i, len(plan), run, wl, pool, arm.key, row["tps"], row["misses_per_ktx"],
                row["adv_per_victim"], row["max_advances"], row["forced_victims"],
                "  hot hit%% %.3f" % row["hot_hit_pct"] if wl == "scan" else "",
                eta // 60, eta % 60))
    write_csv(os.path.join(args.out, "runs.csv"), rows)
    return rows


def throughput(args, arms, main_cluster):
    """Paired windows: the reference (the base arm if there is one, else
    stock), its copy (A/A), stock if it is not the reference, and the main
    arm."""
    import paired
    conf = args.conf
    ref = [a for a in arms if a.key == (args.base or arms[0].key)][0]
    main_arm = [a for a in arms if a.key == args.main]
    trio = [(ref.key, ref), (ref.key + "#2", ref)] + \
        [(a.key, a) for a in arms if a.key == "stock" and a is not ref] + \
        [(a.key, a) for a in main_arm]
    windows = []
    for wl, pool in conf["paired"]:
        db, scale, scan_mb = dataset_of(wl, pool)
        # a cluster holding only this data set, copied once per server
        tpl = Cluster(os.path.join(args.data, "paired-%s" % db), main_cluster.sockdir,
                      PAIRED_PORT, ref, os.path.join(args.data, "paired-load.log"))
        load_datasets(args, tpl, {db: (scale, scan_mb)})
        log("  paired windows: %s %dMB, %s, %d rounds of %d s" % (
            wl, pool, " / ".join(k for k, _ in trio), conf["rounds"], conf["window"]))
        servers = paired.PairedServers(
            trio, tpl.pgdata, args.data, PAIRED_PORT + 1, main_cluster.sockdir,
            lambda i: workload_settings(args, trio[i][1], wl, pool), log=log)
        with servers:
            clusters = [Cluster(servers.datadir(i), main_cluster.sockdir, servers.port(i),
                                ref, None) for i in range(len(trio))]
            for c in clusters:
                if seq_workload(wl):
                    continue
                c.psql("CREATE EXTENSION IF NOT EXISTS pg_prewarm", db)
                c.psql("SELECT pg_prewarm('pgbench_accounts'), "
                       "pg_prewarm('pgbench_accounts_pkey')", db)

            def pgbench_for(i, seconds, seed):
                _, main, others = workload_commands(args, wl, pool, clusters[i],
                                                    seconds, seed)
                return [main] + others, lambda out: parse_pgbench(out)[0]
            ws = paired.run_rounds(servers, pgbench_for, conf["rounds"], conf["window"],
                                   conf["warmup"], seed=4242 + pool, log=log)
        for w in ws:
            w.update(workload=wl, pool_mb=pool, window=conf["window"])
        windows += ws
    if windows:
        write_csv(os.path.join(args.out, "paired.csv"), windows)
    return windows


def cost(args, arms):
    import callgrind
    conf = args.conf
    tested = [a for a in arms if not a.frontier]
    log("  callgrind: cases %s, K = %d" % (",".join(conf["callgrind"]), conf["callgrind_k"]))
    rows = callgrind.run(conf["callgrind"], [(a.key, a.bindir) for a in tested],
                         os.path.join(args.data, "callgrind"), k=conf["callgrind_k"],
                         log=log)
    write_csv(os.path.join(args.out, "callgrind.csv"), rows)
    return rows


def write_csv(path, rows):
    keys = []
    for r in rows:
        for k in r:
            if k not in keys:
                keys.append(k)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)


# columns that stay strings when read back (an arm may be named "0007")
STRING_COLUMNS = ("arm", "workload", "case", "huge_pages")


def read_csv(path):
    if not os.path.exists(path):
        return []
    out = []
    with open(path) as f:
        for r in csv.DictReader(f):
            row = {}
            for k, v in r.items():
                if k in STRING_COLUMNS:
                    row[k] = v
                    continue
                try:
                    row[k] = int(v)
                except ValueError:
                    try:
                        row[k] = float(v)
                    except ValueError:
                        row[k] = v
            out.append(row)
    return out


def machine_info():
    info = {}
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        m = re.search(r"Model name:\s*(.*)", lscpu)
        info["cpu"] = m.group(1).strip() if m else "?"
        m = re.search(r"NUMA node\(s\):\s*(\d+)", lscpu)
        info["numa_nodes"] = m.group(1) if m else "?"
    except OSError:
        info["cpu"] = "?"
        info["numa_nodes"] = "?"
    info["cpus"] = os.cpu_count()
    with open("/proc/meminfo") as f:
        info["mem_gib"] = round(int(f.readline().split()[1]) / 1024 / 1024, 1)
    info["kernel"] = platform.release()
    return info


def report_params(conf):
    return dict(clients=CLIENTS, threads=THREADS, scan_clients=SCAN_CLIENTS,
                scan_tables=SCAN_TABLES, scan_fraction=SCAN_TABLE_FRACTION,
                select_fraction=SELECT_FRACTION, zipf_s=ZIPF_S,
                write_clients=WRITE_CLIENTS, copy_rows=COPY_ROWS,
                write_rate_tpcb=WRITE_RATE_TPCB, write_rate_copy=WRITE_RATE_COPY,
                datasets=datasets(conf["workloads"]))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=MODES, default="full")
    p.add_argument("--out", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--huge-pages", default="off")
    p.add_argument("--command", default="make bench")
    p.add_argument("--report-only", action="store_true",
                   help="rewrite REPORT.md from the CSV files in --out")
    p.add_argument("--runs", type=int, help="override the mode's runs")
    p.add_argument("--warmup", type=int, help="override the mode's warm-up (s)")
    p.add_argument("--measure", type=int, help="override the mode's window (s)")
    p.add_argument("--rounds", type=int, help="override the mode's paired rounds")
    p.add_argument("--workloads", help="override the mode's, e.g. zipf:128,scan:512")
    p.add_argument("--frontier-workloads",
                   help="where the arms with settings run (default: the zipfian "
                   "ones of --workloads), e.g. seqcount8:128,tpcb:128")
    p.add_argument("--paired", help="override the mode's paired workloads ('' for none)")
    p.add_argument("--callgrind", help="override the mode's callgrind cases ('' for none)")
    p.add_argument("--main", help="the arm the targets are about (default: the "
                   "last series arm without settings); the paired windows "
                   "compare it with stock")
    p.add_argument("--base", help="the series arm the main arm's own patches are "
                   "judged against (default: the series arm before it, if any); "
                   "the paired windows use it as their reference")
    p.add_argument("--phases", default="capacity,paired,cost",
                   help="which measurements to make (the CSV files of the others "
                   "in --out are kept)")
    p.add_argument("arms", nargs="+", help="NAME[@GUC=VALUE,...]=BINDIR")
    args = p.parse_args()
    conf = dict(MODES[args.mode])
    for k in ("runs", "warmup", "measure", "rounds"):
        if getattr(args, k):
            conf[k] = getattr(args, k)

    def cases(spec):
        return [(w, int(m)) for w, m in (x.split(":") for x in spec.split(",") if x)]
    if args.workloads is not None:
        conf["workloads"] = cases(args.workloads)
        conf["frontier_workloads"] = [c for c in conf["workloads"] if c[0] == "zipf"]
    if args.frontier_workloads is not None:
        conf["frontier_workloads"] = cases(args.frontier_workloads)
    if args.paired is not None:
        conf["paired"] = cases(args.paired)
    if args.callgrind is not None:
        conf["callgrind"] = [c for c in args.callgrind.split(",") if c]
    args.out = os.path.abspath(args.out)
    args.data = os.path.abspath(args.data)
    args.conf = conf

    arms = []
    for a in args.arms:
        key, bindir = a.rsplit("=", 1)
        arms.append(Arm(key, os.path.abspath(bindir)))
    args.arms = arms
    if not args.main:
        args.main = [a.key for a in arms if a.series and not a.frontier][-1]
    if args.main not in [a.key for a in arms]:
        raise SystemExit("--main %s is not one of the arms" % args.main)
    if not args.base:
        plain = [a.key for a in arms if a.series and not a.frontier and
                 not a.key.startswith("v")]
        i = plain.index(args.main) if args.main in plain else 0
        args.base = plain[i - 1] if i > 0 else None
    elif args.base not in [a.key for a in arms]:
        raise SystemExit("--base %s is not one of the arms" % args.base)
    phases = args.phases.split(",")
    os.makedirs(args.out, exist_ok=True)
    sockdir = os.path.join(args.data, "sock")
    os.makedirs(sockdir, exist_ok=True)

    import report
    if args.report_only:
        with open(os.path.join(args.out, "started")) as f:
            started = datetime.datetime.fromisoformat(f.read().strip())
    else:
        cluster = Cluster(os.path.join(args.data, "cluster"), sockdir, PORT, arms[0],
                          os.path.join(args.data, "server.log"))
        # servers left running by an interrupted benchmark
        for d in [cluster.pgdata] + [os.path.join(args.data, "paired-%d" % i)
                                     for i in range(4)]:
            subprocess.run([arms[0].bin("pg_ctl"), "-D", d, "-m", "immediate", "stop"],
                           capture_output=True)
        started = datetime.datetime.now(datetime.timezone.utc)
        if "capacity" in phases:
            with open(os.path.join(args.out, "started"), "w") as f:
                f.write(started.isoformat() + "\n")
        else:
            with open(os.path.join(args.out, "started")) as f:
                started = datetime.datetime.fromisoformat(f.read().strip())
        for phase, f in (("capacity", "runs.csv"), ("paired", "paired.csv"),
                         ("cost", "callgrind.csv")):
            if phase in phases and os.path.exists(os.path.join(args.out, f)):
                os.unlink(os.path.join(args.out, f))
        args.sdir = write_scripts(args)
        if "capacity" in phases:
            log("preparing data sets")
            load_datasets(args, cluster, datasets(conf["workloads"]))
            warm_os_cache(cluster.pgdata)
            log("capacity: misses, hit ratios, the clock-sweep's work (%d runs)"
                % conf["runs"])
            capacity(args, arms, cluster)
        if conf["paired"] and "paired" in phases:
            log("throughput: paired windows")
            throughput(args, arms, cluster)
        if conf["callgrind"] and "cost" in phases:
            log("cost: instructions per query (callgrind)")
            cost(args, arms)
    rows = read_csv(os.path.join(args.out, "runs.csv"))
    windows = read_csv(os.path.join(args.out, "paired.csv"))
    cg = read_csv(os.path.join(args.out, "callgrind.csv"))
    report.write(args, [a for a in arms if any(r["arm"] == a.key for r in rows)],
                 rows, windows, cg, machine_info(), started,
                 base_settings(args.huge_pages), report_params(conf))
    log("report: %s" % os.path.join(args.out, "REPORT.md"))


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main()
