#!/usr/bin/python3
"""bench/bench.py: run the workloads against every arm and write the report.

Run by bench/bench.sh as the unprivileged user, after it has built the arms:

    bench.py --mode full|quick --out DIR --data DIR --huge-pages on|off \
             --command "make bench" ARM=BINDIR [ARM=BINDIR ...]

The first arm is the reference (stock).  One cluster (initdb'd by the first
arm, in DIR/cluster) holds every data set, so every arm reads the very same
pages; all arms are PostgreSQL 18 with the same catalog version.  For every
run, workload and arm (arms interleaved: A B C A B C ...), it starts the
server with the workload's settings, prewarms the tables, warms up with the
workload, resets the counters, measures, and stops the server.  Medians over
the runs go into REPORT.md; every single measurement into runs.csv.
"""

import argparse
import csv
import datetime
import os
import platform
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
    # full: the report's numbers.  About an hour on a 2-core machine.
    "full": dict(
        runs=3, warmup=15, measure=25,
        workloads=[
            ("zipf", 128), ("zipf", 512), ("zipf", 2048),
            ("scan", 512), ("select", 512),
        ]),
    # quick: a smoke run of the whole pipeline, cheap enough for CI.  One
    # run is no basis for a claim; the report says so.
    "quick": dict(
        runs=1, warmup=3, measure=6,
        workloads=[("zipf", 128), ("scan", 128), ("select", 128)]),
}

CLIENTS = 8             # enough to keep both cores busy
THREADS = 2
SCAN_CLIENTS = 2        # of the scan workload: one-touch scans
SCAN_TABLES = 8
SCAN_TABLE_FRACTION = 0.20  # of shared_buffers: under 1/4, so no ring
SELECT_FRACTION = 0.60      # pgbench -S data set, of shared_buffers

PORT = 55499


def log(msg):
    print(msg, flush=True)


class Arm:
    """An arm: a build, and for NAME@T, the same build with
    clock_sweep_max_chances = T (the bound's frontier, zipfian only)."""

    def __init__(self, key, bindir):
        self.key = key
        self.name, _, bound = key.partition("@")
        self.max_chances = int(bound) if bound else None
        self.bindir = bindir
        label = os.path.join(os.path.dirname(os.path.dirname(bindir)), "label")
        self.label = open(label).read().strip() if os.path.exists(label) else self.name
        if self.max_chances is not None:
            self.label += ", clock_sweep_max_chances = %d" % self.max_chances
        self.series = self.name != "stock"

    def bin(self, prog):
        return os.path.join(self.bindir, prog)


class Cluster:
    def __init__(self, data, sockdir):
        self.pgdata = os.path.join(data, "cluster")
        self.sockdir = sockdir
        self.logfile = os.path.join(data, "server.log")

    def run(self, arm, args, **kw):
        return subprocess.run([arm.bin(args[0])] + args[1:], check=True,
                              text=True, capture_output=True, **kw)

    def psql(self, arm, sql, db="postgres"):
        r = self.run(arm, ["psql", "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1",
                           "-h", self.sockdir, "-p", str(PORT), "-d", db,
                           "-c", sql])
        return r.stdout.strip()

    def start(self, arm, settings):
        opts = " ".join("-c %s=%s" % (k, v) for k, v in settings.items())
        try:
            self.run(arm, ["pg_ctl", "-w", "-t", "300", "-D", self.pgdata,
                           "-l", self.logfile, "-o", opts, "start"])
        except subprocess.CalledProcessError:
            sys.stderr.write(open(self.logfile).read()[-3000:])
            raise

    def stop(self, arm):
        self.run(arm, ["pg_ctl", "-w", "-t", "300", "-D", self.pgdata,
                       "-m", "fast", "stop"])


def base_settings(huge_pages, sockdir):
    return {
        "port": PORT,
        "listen_addresses": "''",
        "unix_socket_directories": sockdir,
        "max_connections": 40,
        "huge_pages": huge_pages,
        "autovacuum": "off",
        "io_method": "sync",
        "checkpoint_timeout": "1h",
        "max_wal_size": "20GB",
        "track_io_timing": "off",
        "jit": "off",
    }


def scale_for(pool_mb, fraction):
    return max(1, round(fraction * pool_mb * MB / PAGE / PAGES_PER_SCALE))


def datasets(mode):
    """Databases the workloads need: name -> (pgbench scale, scan tables MB)."""
    need = {}
    for wl, pool in MODES[mode]["workloads"]:
        if wl in ("zipf", "scan"):
            name = "zipf%d" % pool
            scan_mb = int(pool * SCAN_TABLE_FRACTION) if wl == "scan" else 0
            old = need.get(name, (0, 0))
            need[name] = (scale_for(pool, 1.15), max(old[1], scan_mb))
        else:
            need["fit%d" % pool] = (scale_for(pool, SELECT_FRACTION), 0)
    return need


def prepare_data(args, arms, cluster):
    """initdb once, load the data sets that are not there yet."""
    ref = arms[0]
    stamp = os.path.join(cluster.pgdata, "bench-datasets")
    if not os.path.exists(os.path.join(cluster.pgdata, "PG_VERSION")):
        log("  initdb (%s)" % ref.name)
        shutil.rmtree(cluster.pgdata, ignore_errors=True)
        cluster.run(ref, ["initdb", "-D", cluster.pgdata, "-A", "trust", "-N"])
        open(stamp, "w").close()
    # the stamp lists the loads done, the last line per database wins
    have = {}
    if os.path.exists(stamp):
        for line in open(stamp).read().split():
            db, scale, scan_mb = line.split(":")
            have[db] = (int(scale), int(scan_mb))

    def loaded(db, scale, scan_mb):
        return db in have and have[db][0] == scale and \
            (scan_mb == 0 or have[db][1] == scan_mb)
    need = datasets(args.mode)
    todo = {k: v for k, v in need.items() if not loaded(k, *v)}
    if todo:
        settings = base_settings("off", cluster.sockdir)
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
                cluster.psql(ref, "DROP DATABASE IF EXISTS %s" % db)
                cluster.psql(ref, "CREATE DATABASE %s" % db)
                cluster.run(ref, ["pgbench", "-i", "-q", "-s", str(scale),
                                  "-h", cluster.sockdir, "-p", str(PORT), db])
                if scan_mb:
                    # ~ 36 rows of 200 bytes per page
                    rows = scan_mb * MB // PAGE * 36
                    for i in range(1, SCAN_TABLES + 1):
                        cluster.psql(ref, "CREATE TABLE scan_%d AS SELECT g AS id, "
                                     "repeat('x', 200) AS pad "
                                     "FROM generate_series(1, %d) g" % (i, rows), db)
                cluster.psql(ref, "VACUUM ANALYZE", db)
                cluster.psql(ref, "CHECKPOINT")
                with open(stamp, "a") as f:
                    f.write("%s:%d:%d\n" % (db, scale, scan_mb))
                log("    done in %.0f s" % (time.time() - t0))
        finally:
            cluster.stop(ref)


def warm_os_cache(cluster):
    """Read every data file once, so that no arm pays for a cold page cache."""
    for root, _, files in os.walk(os.path.join(cluster.pgdata, "base")):
        for f in files:
            with open(os.path.join(root, f), "rb") as fh:
                while fh.read(1 << 20):
                    pass


def write_scripts(outdir):
    sdir = os.path.join(outdir, "scripts")
    os.makedirs(sdir, exist_ok=True)
    with open(os.path.join(sdir, "zipf.sql"), "w") as f:
        f.write("\\set r random_zipfian(1, :naccounts, %.2f)\n" % ZIPF_S)
        f.write("\\set aid permute(:r, :naccounts, %d)\n" % PERMUTE_SEED)
        f.write("SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n")
    with open(os.path.join(sdir, "scan.sql"), "w") as f:
        f.write("\\set n random(1, %d)\n" % SCAN_TABLES)
        f.write("SELECT count(*) FROM scan_:n;\n")
    return sdir


def setup_counters(cluster, arm):
    """bench_counters() and bench_reset() in the postgres database, the same
    columns for every arm: the series' pg_buffercache_partitions, or the
    functions of bench/stock-counters.patch."""
    cluster.psql(arm, "DROP EXTENSION IF EXISTS pg_buffercache CASCADE; "
                 "DROP FUNCTION IF EXISTS bench_counters(); "
                 "DROP FUNCTION IF EXISTS bench_reset(); "
                 "CREATE EXTENSION pg_buffercache")
    out = ("OUT allocations bigint, OUT clock_advances bigint, "
           "OUT max_clock_advances bigint, OUT bgwriter_chances bigint")
    if arm.series:
        has_bgw = cluster.psql(arm, "SELECT count(*) FROM pg_attribute WHERE "
                               "attrelid = 'pg_buffercache_partitions'::regclass "
                               "AND attname = 'bgwriter_chances'") == "1"
        cluster.psql(arm, """
CREATE FUNCTION bench_counters(%s) LANGUAGE sql AS $$
  SELECT sum(allocations)::bigint, sum(clock_advances)::bigint,
         max(max_clock_advances)::bigint, %s
    FROM pg_buffercache_partitions $$;
CREATE FUNCTION bench_reset() RETURNS void LANGUAGE sql AS
  $$ SELECT pg_buffercache_partitions_reset() $$;
""" % (out, "sum(bgwriter_chances)::bigint" if has_bgw else "0::bigint"))
    else:
        cluster.psql(arm, """
CREATE FUNCTION bench_counters(%s) LANGUAGE c
  AS '$libdir/pg_buffercache', 'pg_buffercache_bench_counters';
CREATE FUNCTION bench_reset() RETURNS void LANGUAGE c
  AS '$libdir/pg_buffercache', 'pg_buffercache_bench_reset';
""" % out)


def db_stats(cluster, arm, db):
    hit, read = cluster.psql(arm, "SELECT blks_hit, blks_read FROM pg_stat_database "
                             "WHERE datname = '%s'" % db).split("|")
    hot = cluster.psql(arm, "SELECT coalesce(heap_blks_hit, 0) + coalesce(idx_blks_hit, 0), "
                       "coalesce(heap_blks_read, 0) + coalesce(idx_blks_read, 0) "
                       "FROM pg_statio_user_tables WHERE relname = 'pgbench_accounts'",
                       db).split("|")
    return int(hit), int(read), int(hot[0]), int(hot[1])


def pgbench_cmd(arm, cluster, db, script_args, clients, threads, seconds, seed,
                extra=()):
    return ([arm.bin("pgbench"), "-n", "-h", cluster.sockdir, "-p", str(PORT),
             "-c", str(clients), "-j", str(threads), "-T", str(seconds),
             "--random-seed=%d" % seed] + list(extra) + script_args + [db])


def parse_pgbench(out):
    tps = re.search(r"tps = ([0-9.]+) \(without initial connection time\)", out)
    lat = re.search(r"latency average = ([0-9.]+) ms", out)
    txn = re.search(r"number of transactions actually processed: (\d+)", out)
    if not tps:
        raise RuntimeError("cannot parse pgbench output:\n" + out)
    return (float(tps.group(1)), float(lat.group(1)) if lat else 0.0,
            int(txn.group(1)) if txn else 0)


def workload_commands(wl, pool, arm, cluster, sdir, seconds, seed):
    """The pgbench processes of one workload: (main, [concurrent ones])."""
    if wl == "select":
        db = "fit%d" % pool
        return db, pgbench_cmd(arm, cluster, db, ["-S", "-M", "prepared"],
                               CLIENTS, THREADS, seconds, seed), []
    db = "zipf%d" % pool
    scale = datasets(ARGS.mode)[db][0]
    zipf = ["-M", "prepared", "-D", "naccounts=%d" % (scale * 100000),
            "-f", os.path.join(sdir, "zipf.sql")]
    if wl == "zipf":
        return db, pgbench_cmd(arm, cluster, db, zipf, CLIENTS, THREADS,
                               seconds, seed), []
    # scan: the hot set with fewer clients, plus one-touch scans
    scan = ["-M", "simple", "-f", os.path.join(sdir, "scan.sql")]
    return db, pgbench_cmd(arm, cluster, db, zipf, CLIENTS - SCAN_CLIENTS,
                           1, seconds, seed), \
        [pgbench_cmd(arm, cluster, db, scan, SCAN_CLIENTS, 1, seconds, seed + 1)]


def run_pgbench(main, others):
    procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True) for c in [main] + others]
    outs = [p.communicate()[0] for p in procs]
    for p, o in zip(procs, outs):
        if p.returncode != 0:
            raise RuntimeError("pgbench failed:\n" + o)
    return outs


def measure(args, arm, cluster, sdir, wl, pool, run):
    conf = args.conf
    settings = base_settings(args.huge_pages, cluster.sockdir)
    settings["shared_buffers"] = "%dMB" % pool
    if arm.series:
        settings["shared_buffers_numa"] = "on"
    if arm.max_chances is not None:
        settings["clock_sweep_max_chances"] = arm.max_chances
    cluster.start(arm, settings)
    try:
        setup_counters(cluster, arm)
        seed = 1000 + run
        db, main, others = workload_commands(wl, pool, arm, cluster, sdir,
                                             conf["warmup"], seed)
        cluster.psql(arm, "CREATE EXTENSION IF NOT EXISTS pg_prewarm", db)
        tables = ["pgbench_accounts", "pgbench_accounts_pkey"]
        cluster.psql(arm, "SELECT " + ", ".join("pg_prewarm('%s')" % t for t in tables), db)
        run_pgbench(main, others)
        time.sleep(1)
        s0 = db_stats(cluster, arm, db)
        cluster.psql(arm, "SELECT bench_reset()")
        db, main, others = workload_commands(wl, pool, arm, cluster, sdir,
                                             conf["measure"], seed + 100)
        outs = run_pgbench(main, others)
        time.sleep(1)  # let the pgbench backends' statistics be flushed
        s1 = db_stats(cluster, arm, db)
        allocs, advances, max_adv, bgw = (
            int(x) for x in cluster.psql(arm, "SELECT * FROM bench_counters()").split("|"))
        nb = int(cluster.psql(arm, "SELECT setting FROM pg_settings WHERE name = 'shared_buffers'"))
        huge = cluster.psql(arm, "SHOW huge_pages_status")
    finally:
        cluster.stop(arm)
    tps, lat, txn = parse_pgbench(outs[0])
    hit, read = s1[0] - s0[0], s1[1] - s0[1]
    hhit, hread = s1[2] - s0[2], s1[3] - s0[3]
    row = dict(
        run=run, workload=wl, pool_mb=pool, arm=arm.key, nbuffers=nb,
        huge_pages=huge, tps=tps, latency_ms=lat, transactions=txn,
        allocations=allocs, advances=advances, max_advances=max_adv,
        bgwriter_chances=bgw,
        adv_per_victim=advances / allocs if allocs else 0.0,
        hit_pct=100.0 * hit / (hit + read) if hit + read else 100.0,
        hot_hit_pct=100.0 * hhit / (hhit + hread) if hhit + hread else 100.0,
        scans_per_s=parse_pgbench(outs[1])[0] if len(outs) > 1 else 0.0,
    )
    return row


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


def report_params():
    return dict(clients=CLIENTS, threads=THREADS, scan_clients=SCAN_CLIENTS,
                scan_tables=SCAN_TABLES, scan_fraction=SCAN_TABLE_FRACTION,
                select_fraction=SELECT_FRACTION, zipf_s=ZIPF_S,
                datasets=datasets(ARGS.mode))


ARGS = None


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=MODES, default="full")
    p.add_argument("--out", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--huge-pages", default="off")
    p.add_argument("--command", default="make bench")
    p.add_argument("--report-only", action="store_true",
                   help="rewrite REPORT.md from the runs.csv in --out")
    p.add_argument("--runs", type=int, help="override the mode's runs")
    p.add_argument("--warmup", type=int, help="override the mode's warm-up (s)")
    p.add_argument("--measure", type=int, help="override the mode's window (s)")
    p.add_argument("--workloads", help="override the mode's, e.g. zipf:128,scan:512")
    p.add_argument("arms", nargs="+", help="NAME=BINDIR")
    args = ARGS = p.parse_args()
    conf = MODES[args.mode]
    for k in ("runs", "warmup", "measure"):
        if getattr(args, k):
            conf[k] = getattr(args, k)
    if args.workloads:
        conf["workloads"] = [(w, int(m)) for w, m in
                             (x.split(":") for x in args.workloads.split(","))]
    args.out = os.path.abspath(args.out)
    args.data = os.path.abspath(args.data)
    args.conf = conf

    arms = []
    for a in args.arms:
        key, bindir = a.split("=", 1)
        arms.append(Arm(key, os.path.abspath(bindir)))
    os.makedirs(args.out, exist_ok=True)
    if args.report_only:
        # rewrite REPORT.md (and the plots) from runs.csv, e.g. after
        # editing DISCUSSION.md
        import report
        with open(os.path.join(args.out, "runs.csv")) as f:
            rows = [{k: (v if k in ("workload", "arm", "huge_pages") else
                         float(v) if "." in v else int(v)) for k, v in r.items()}
                    for r in csv.DictReader(f)]
        with open(os.path.join(args.out, "started")) as f:
            started = datetime.datetime.fromisoformat(f.read().strip())
        report.write(args, [a for a in arms if any(r["arm"] == a.key for r in rows)],
                     rows, machine_info(), started,
                     base_settings(args.huge_pages, "(a directory under build/bench/data)"),
                     report_params())
        log("report: %s" % os.path.join(args.out, "REPORT.md"))
        return
    sockdir = os.path.join(args.data, "sock")
    os.makedirs(sockdir, exist_ok=True)
    cluster = Cluster(args.data, sockdir)
    # a server left running by an interrupted benchmark
    for arm in arms:
        subprocess.run([arm.bin("pg_ctl"), "-D", cluster.pgdata, "-m", "immediate",
                        "stop"], capture_output=True)

    started = datetime.datetime.now(datetime.timezone.utc)
    with open(os.path.join(args.out, "started"), "w") as f:
        f.write(started.isoformat() + "\n")
    log("preparing data sets")
    prepare_data(args, arms, cluster)
    warm_os_cache(cluster)
    sdir = write_scripts(args.out)

    plan = [(run, wl, pool, arm)
            for run in range(1, args.conf["runs"] + 1)
            for wl, pool in args.conf["workloads"]
            for arm in arms
            if arm.max_chances is None or wl == "zipf"]
    rows = []
    t0 = time.time()
    for i, (run, wl, pool, arm) in enumerate(plan, 1):
        row = measure(args, arm, cluster, sdir, wl, pool, run)
        rows.append(row)
        elapsed = time.time() - t0
        eta = elapsed / i * (len(plan) - i)
        log("[%d/%d] run %d %s %dMB %-6s tps %8.0f  adv/victim %5.2f  tail %6d  "
            "hit%% %.3f%s  (eta %dm%02ds)" % (
                i, len(plan), run, wl, pool, arm.key, row["tps"],
                row["adv_per_victim"], row["max_advances"], row["hit_pct"],
                "  hot hit%% %.3f" % row["hot_hit_pct"] if wl == "scan" else "",
                eta // 60, eta % 60))

    with open(os.path.join(args.out, "runs.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)

    import report
    report.write(args, arms, rows, machine_info(), started,
                 base_settings(args.huge_pages, "(a directory under build/bench/data)"),
                 report_params())
    log("report: %s" % os.path.join(args.out, "REPORT.md"))


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main()
