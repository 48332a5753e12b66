#!/usr/bin/python3
"""bench/callgrind.py: the exact instruction cost per query of each arm.

Throughput on a small, shared machine is too noisy (+-5%) to decide whether
a change costs 0.3% or nothing.  This measures instructions instead: one
backend, in single-user mode (``postgres --single``), runs a fixed script of
SQL statements read from stdin, one statement per line, under valgrind's
callgrind, and the total instruction count (Ir) of the process is read from
the callgrind output file.  Each measurement runs two scripts that share an
identical prefix (warm-up) and differ only in the number of measured
queries, K and 2K:

    Ir per query = (Ir(prefix + 2K queries) - Ir(prefix + K queries)) / K

so the start-up, the warm-up, the shutdown checkpoint and the exit cancel
out; what is left is the cost of queries K+1..2K, in the state the first K
left behind.

Usage (as the unprivileged user; PostgreSQL refuses to run as root):

    callgrind.py --data DIR [--cases hit,evict,seqscan] [--k N] [--k-scan N]
                 [--repeat N] [--csv FILE] ARM=BINDIR [ARM=BINDIR ...]

The first arm is the reference of the ratio column, and its initdb and
pgbench build the template data directory, DIR/template (pgbench scale 10,
database "bench"), once; later invocations reuse it.  Every single run works
on a fresh ``cp -a`` copy of the template (DIR/run), so every run of every
arm starts from the same files.  The callgrind output files stay in DIR/out
(for callgrind_annotate), the scripts in DIR/scripts, the logs in DIR/log.

Cases:

  hit             point lookups (pgbench_accounts by aid, a fixed seeded
                  pseudo-random sequence), shared_buffers=256MB: table and
                  index prewarmed, every lookup hits.
  evict           the same lookups, shared_buffers=16MB (data ~150MB): most
                  lookups miss shared buffers and evict a victim (the OS page
                  cache holds the files).
  evict_stride    lookups of aid 1 + (i * 67) mod 1000000, i = 0, 1, ...,
                  shared_buffers=16MB: every lookup reads a heap page no
                  lookup has touched for the last ~14900 lookups, so every
                  lookup misses in every arm, whatever its replacement rule
                  (the index pages are read in order, the same in every
                  arm): the cost of the miss-and-evict path at equal misses.
                  Not in the default cases.
  seqscan_count   SELECT count(*) FROM pgbench_accounts, shared_buffers=16MB
                  (a bulk-read ring).
  seqscan_offset  SELECT * FROM pgbench_accounts OFFSET 1000000000, likewise.
  seqscan         both seqscan cases.

Every run uses the same settings for every arm (COMMON_SETTINGS, the case's
shared_buffers; the scans also forbid index paths, as the all-visible table
would otherwise be counted by an index-only scan), and checks that it ran
what it means to: exit status 0, no ERROR/FATAL/PANIC/WARNING on stderr, one
prompt per statement, every lookup's and count's result row, and the plan
(calls of the executor's scan node initializations, exactly one per
measured query: ExecInitIndexScan for lookups, ExecInitSeqScan for scans,
and none of the other scan nodes).  Any failure stops the whole measurement
with the command, its stderr and valgrind's log.

The table shows, per case and arm, Ir per query (mean of the repetitions),
the ratio to the first arm, the spread of the repetitions (max - min, and
relative), and reads and buffer allocations per query (calls of
smgrstartreadv and StrategyGetBuffer, K..2K as well): with a different
replacement rule an arm can miss more or less often in "evict", and a
miss costs some 12000 Ir by itself (read path, checksum verification), so
compare evict's Ir only together with its reads; evict_stride has the same
misses in every arm.

What this measures, and what not:

- Instructions executed in user space by the backend (libc included), not
  cycles: cache misses, memory latency, NUMA placement, atomics' cost and
  contention are invisible, and so is the kernel's work (pread copies).
- Single-user mode is one process, with no postmaster, background writer,
  checkpointer, walwriter or autovacuum (what the series lets the background
  writer do is not exercised); the backend itself writes the shutdown
  checkpoint (cancels out).  Statements come from stdin, one per line
  (without -j, a newline ends a statement, which is what the scripts need;
  -j would need a ";" and an empty line after each).  Each is parsed and
  planned anew (simple protocol, no prepared statements), and each result
  row is printed in single-user mode's verbose text form: that overhead is
  part of every query's Ir, the same in every arm, and makes the ratios
  smaller than the same difference in Ir would be for a pgbench -M prepared
  query.
- Data checksums are on (initdb's default in 18, as in bench.py): each page
  read from the OS costs a checksum verification, ~10000 Ir.
- Work driven by the wall clock (NOT_COUNTED: the once-a-second statistics
  flush and its idle timer) is not counted: under valgrind it would depend
  on the machine's load.  What remains varies by a few hundred Ir per run.

The module is importable: run(cases, arms, datadir, ...) returns one dict
per (case, arm, repetition); see its docstring.  Python 3 standard library
only.
"""

import argparse
import csv
import fcntl
import os
import re
import shutil
import subprocess
import sys
import time

PORT = 55520            # only for the server that builds the template
SCALE = 10
NACCOUNTS = 100000 * SCALE
DBNAME = "bench"
SEED = 20250601         # of the lookup sequence
LOOKUP_WARMUP = 500     # lookups in the shared prefix, after the prewarm
DEFAULT_K = 10000       # measured lookups (K and 2K)
DEFAULT_K_SCAN = 5      # measured scans (K and 2K)

# Settings of every single-user run, for every arm alike.
COMMON_SETTINGS = {
    "huge_pages": "off",
    "io_method": "sync",
    "autovacuum": "off",
    "jit": "off",
    "fsync": "off",
    "max_parallel_workers_per_gather": "0",
    "max_connections": "100",
    "track_io_timing": "off",
}

LOOKUP = "SELECT abalance FROM pgbench_accounts WHERE aid = %d"
PREWARM = ["SELECT pg_prewarm('pgbench_accounts')",
           "SELECT pg_prewarm('pgbench_accounts_pkey')"]

STRIDE = 67             # evict_stride: > 61 rows per heap page, prime

# The table is all-visible, so count(*) would be an index-only scan of the
# primary key: the scans forbid index paths.
NO_INDEX = {"enable_indexscan": "off", "enable_indexonlyscan": "off",
            "enable_bitmapscan": "off"}

# Calls per measured query that every run must show (the plan is the one
# meant): function -> exact count.  These are the executor's initializations
# of scan nodes, which catalog access never calls, and not the access
# methods' functions (_bt_first, heap_getnextslot), which it does: a build
# with assertions (the quick mode's series arm) fails about 0.1% of its
# catcache entry builds on purpose (CatalogCacheCreateEntry, to exercise the
# retry path), seeded differently in every process, so the number of catalog
# scans in the shared prefix, and with them those functions' calls, differ
# from one run to the next by one or two (and the quick mode's Ir per query
# of that arm by up to 0.2%, against 0.005% for a build without assertions:
# noise a smoke run accepts, and the full mode's release builds do not
# have).
SCAN_NODES = ("ExecInitSeqScan", "ExecInitIndexScan", "ExecInitIndexOnlyScan",
              "ExecInitBitmapHeapScan")
LOOKUP_CALLS = {fn: int(fn == "ExecInitIndexScan") for fn in SCAN_NODES}
SCAN_CALLS = {fn: int(fn == "ExecInitSeqScan") for fn in SCAN_NODES}

# name -> shared_buffers, extra settings, kind, the order of the aids
# (lookups) or the scanned query (scans), the calls per query to check
CASES = {
    "hit": dict(shared_buffers="256MB", settings={}, kind="lookup",
                order="random", calls=LOOKUP_CALLS),
    "evict": dict(shared_buffers="16MB", settings={}, kind="lookup",
                  order="random", calls=LOOKUP_CALLS),
    "evict_stride": dict(shared_buffers="16MB", settings={}, kind="lookup",
                         order="stride", calls=LOOKUP_CALLS),
    "seqscan_count": dict(shared_buffers="16MB", settings=NO_INDEX, kind="scan",
                          query="SELECT count(*) FROM pgbench_accounts",
                          calls=SCAN_CALLS),
    "seqscan_offset": dict(shared_buffers="16MB", settings=NO_INDEX, kind="scan",
                           query="SELECT * FROM pgbench_accounts OFFSET 1000000000",
                           calls=SCAN_CALLS),
}
ALIASES = {"seqscan": ["seqscan_count", "seqscan_offset"]}

# Functions whose calls are counted (they exist, not inlined, in both arms):
# reads: smgrstartreadv, one per read I/O (a lookup's miss is one I/O of one
#   block; a seqscan's reads combine up to io_combine_limit blocks);
# allocs: StrategyGetBuffer, one per buffer needed for a page that is not
#   in shared buffers, from a ring (its reuse included) or the clock sweep.
COUNTED = {"reads": "smgrstartreadv", "allocs": "StrategyGetBuffer"}

# Work driven by the wall clock, not by the queries: the cumulative
# statistics are flushed at most once a second (pgstat_report_stat), an idle
# timer is armed and disarmed around it, and its SIGALRM handled.  Under
# valgrind, how often that happens depends on the slowdown and on the load
# of the machine, a noise of up to ~0.03% per query.  Their instructions are
# not counted (callgrind --toggle-collect, collection off inside them).  The
# same code in every arm; a real backend pays it at most once a second.
NOT_COUNTED = ("pgstat_report_stat", "enable_timeout_after", "disable_timeout",
               "handle_sig_alarm")

CSV_COLUMNS = ["case", "arm", "k", "ir_k", "ir_2k", "ir_per_query",
               "reads_per_query", "allocs_per_query", "rep"]


class Failure(Exception):
    """A step failed; the message says which and with what command."""


def _quote(cmd):
    return " ".join(a if re.match(r"^[\w@%+=:,./-]+$", a) else "'%s'" % a.replace("'", "'\\''")
                    for a in cmd)


def _tail(path, n=3000):
    try:
        with open(path, errors="replace") as f:
            return f.read()[-n:]
    except OSError as e:
        return "(cannot read %s: %s)" % (path, e)


def _run(cmd, what, **kw):
    """Run a command, raise Failure with its output if it fails."""
    try:
        r = subprocess.run(cmd, text=True, capture_output=True, **kw)
    except OSError as e:
        raise Failure("%s: cannot run %s: %s" % (what, _quote(cmd), e))
    if r.returncode != 0:
        raise Failure("%s failed (exit %d): %s\n--- stdout:\n%s\n--- stderr:\n%s"
                      % (what, r.returncode, _quote(cmd), r.stdout[-3000:],
                         r.stderr[-3000:]))
    return r.stdout


def expand_cases(names):
    out = []
    for n in names:
        n = n.strip()
        if not n:
            continue
        for c in ALIASES.get(n, [n]):
            if c not in CASES:
                raise Failure("unknown case %r (known: %s)"
                              % (n, ", ".join(list(CASES) + list(ALIASES))))
            if c not in out:
                out.append(c)
    if not out:
        raise Failure("no case given")
    return out


# --------------------------------------------------------------- the arms

class _Arm:
    def __init__(self, spec):
        if isinstance(spec, str):
            name, sep, bindir = spec.partition("=")
            if not sep or not name or not bindir:
                raise Failure("arm %r: expected NAME=BINDIR" % spec)
            settings = {}
        elif hasattr(spec, "bindir"):       # bench.py's Arm
            name, bindir, settings = getattr(spec, "key", spec.name), spec.bindir, {}
            if getattr(spec, "max_chances", None) is not None:
                settings["clock_sweep_max_chances"] = str(spec.max_chances)
        else:
            name, bindir = spec[0], spec[1]
            settings = dict(spec[2]) if len(spec) > 2 else {}
        self.name = name
        self.bindir = os.path.abspath(bindir)
        self.settings = settings
        for prog in ("postgres", "initdb", "pg_ctl", "psql", "pgbench"):
            if not os.access(self.bin(prog), os.X_OK):
                raise Failure("arm %s: %s is not an executable" % (name, self.bin(prog)))

    def bin(self, prog):
        return os.path.join(self.bindir, prog)


# ----------------------------------------------------------- the template

def _template_id(arm):
    return "bindir=%s scale=%d db=%s\n" % (arm.bindir, SCALE, DBNAME)


def prepare_template(datadir, arm, log=print):
    """initdb (with arm) DIR/template and load pgbench scale SCALE into the
    database DBNAME with pg_prewarm installed, frozen, analyzed, hint bits
    set, checkpointed, shut down cleanly.  Done once; reused while
    DIR/template.ok names the same bindir and scale."""
    tdir = os.path.join(datadir, "template")
    stamp = os.path.join(datadir, "template.ok")
    if os.path.exists(stamp) and os.path.exists(os.path.join(tdir, "PG_VERSION")):
        if open(stamp).read() == _template_id(arm):
            return tdir
        log("  template was built by another arm or scale; rebuilding it")
    if os.path.exists(stamp):
        os.unlink(stamp)
    sockdir = os.path.join(datadir, "sock")
    logdir = os.path.join(datadir, "log")
    os.makedirs(sockdir, exist_ok=True)
    os.makedirs(logdir, exist_ok=True)
    if os.path.exists(os.path.join(sockdir, ".s.PGSQL.%d" % PORT)):
        raise Failure("a server is already listening at %s/.s.PGSQL.%d; "
                      "stop it first" % (sockdir, PORT))
    t0 = time.time()
    log("  building the template %s with %s (pgbench scale %d)"
        % (tdir, arm.name, SCALE))
    shutil.rmtree(tdir, ignore_errors=True)
    _run([arm.bin("initdb"), "-D", tdir, "-A", "trust", "--locale=C",
          "-E", "UTF8", "-N"], "initdb of the template")
    opts = {"port": str(PORT), "listen_addresses": "''",
            "unix_socket_directories": sockdir, "shared_buffers": "512MB",
            "huge_pages": "off", "autovacuum": "off", "fsync": "off",
            "synchronous_commit": "off", "maintenance_work_mem": "256MB",
            "max_wal_size": "4GB", "checkpoint_timeout": "1h",
            "io_method": "sync", "jit": "off"}
    server_log = os.path.join(logdir, "template-server.log")
    start = [arm.bin("pg_ctl"), "-w", "-t", "300", "-D", tdir, "-l", server_log,
             "-o", " ".join("-c %s=%s" % kv for kv in opts.items()), "start"]
    try:
        _run(start, "start of the template server")
    except Failure as e:
        raise Failure("%s\n--- server log:\n%s" % (e, _tail(server_log)))
    try:
        def psql(sql, db="postgres"):
            return _run([arm.bin("psql"), "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1",
                         "-h", sockdir, "-p", str(PORT), "-d", db, "-c", sql],
                        "psql on the template server").strip()
        psql("CREATE DATABASE %s" % DBNAME)
        _run([arm.bin("pgbench"), "-i", "-q", "-s", str(SCALE), "-h", sockdir,
              "-p", str(PORT), DBNAME], "pgbench -i of the template")
        psql("CREATE EXTENSION pg_prewarm", DBNAME)
        # freeze everything, catalogs included, and set every hint bit, so
        # that no run writes a page or a hint bit the next run would not
        psql("VACUUM (FREEZE, ANALYZE)", DBNAME)
        for t in ("pgbench_accounts", "pgbench_branches", "pgbench_tellers",
                  "pgbench_history"):
            psql("SELECT count(*) FROM %s" % t, DBNAME)
        n = int(psql("SELECT count(*) FROM pgbench_accounts", DBNAME))
        if n != NACCOUNTS:
            raise Failure("template: pgbench_accounts has %d rows, expected %d"
                          % (n, NACCOUNTS))
        psql("CHECKPOINT")
    except BaseException:
        try:
            _run([arm.bin("pg_ctl"), "-w", "-t", "300", "-D", tdir, "-m", "fast",
                  "stop"], "stop of the template server")
        except Failure as e:
            log("  (and the template server did not stop: %s)" % e)
        raise
    _run([arm.bin("pg_ctl"), "-w", "-t", "300", "-D", tdir, "-m", "fast", "stop"],
         "stop of the template server")
    with open(stamp, "w") as f:
        f.write(_template_id(arm))
    log("  template ready in %.0f s" % (time.time() - t0))
    return tdir


# -------------------------------------------------------------- scripts

def lookup_aids(n, order="random", seed=SEED):
    """n aids in 1..NACCOUNTS: a fixed pseudo-random sequence (splitmix64 of
    seed), or for order "stride", 1 + (i * STRIDE) mod NACCOUNTS."""
    if order == "stride":
        return [1 + (i * STRIDE) % NACCOUNTS for i in range(n)]
    if order != "random":
        raise Failure("unknown lookup order %r" % order)
    x = seed & 0xFFFFFFFFFFFFFFFF
    out = []
    for _ in range(n):
        x = (x + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        z ^= z >> 31
        out.append(1 + z % NACCOUNTS)
    return out


def script_lines(case, n):
    """The statements of the script with n measured queries: the prefix
    (identical for every n) and then the n queries."""
    c = CASES[case]
    if c["kind"] == "lookup":
        aids = lookup_aids(LOOKUP_WARMUP + n, c["order"])
        return PREWARM + [LOOKUP % a for a in aids]
    # scans: one unmeasured execution warms the caches (catalog, relcache,
    # plan), then n executions
    return [c["query"]] * (1 + n)


def expected_output(case, n):
    """(pattern in the single-user output, how many times) for a check that
    every statement ran."""
    c = CASES[case]
    if c["kind"] == "lookup":
        return r"\babalance = ", LOOKUP_WARMUP + n
    if "count(*)" in c["query"]:
        return r'\bcount = "%d"' % NACCOUNTS, 1 + n
    return None, 0


def write_script(path, case, n):
    with open(path, "w") as f:
        for line in script_lines(case, n):
            assert "\n" not in line
            f.write(line + "\n")


# ------------------------------------------------------------ one run

def parse_callgrind(path, functions=()):
    """The total Ir of a callgrind output file (its "totals:" line), and
    the number of calls to each of functions (by name, summed over every
    caller; 0 when never called).  The "summary:" line is not used: it can
    fall short of the totals by a few hundred Ir (seen when a timer signal
    was handled), while "totals:" equals valgrind's own "Collected" count."""
    events, totals = None, None
    names = {}                  # compressed name ids of fn= and cfn=
    cfn = None
    calls = dict.fromkeys(functions, 0)
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("fn=") or line.startswith("cfn="):
                key, _, rest = line.rstrip("\n").partition("=")
                m = re.match(r"\((\d+)\)(?: (.*))?$", rest)
                if m:
                    if m.group(2) is not None:
                        names[m.group(1)] = m.group(2)
                    name = names.get(m.group(1))
                    if name is None:
                        raise Failure("%s: function id %s used before it is named"
                                      % (path, m.group(1)))
                else:
                    name = rest
                if key == "cfn":
                    cfn = re.sub(r"'\d+$", "", name)
            elif line.startswith("calls="):
                if cfn in calls:
                    calls[cfn] += int(line[6:].split()[0])
            elif line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith("totals:"):
                totals = [int(v) for v in line.split()[1:]]
    if events is None or totals is None or "Ir" not in events:
        raise Failure("%s: no events/totals line with Ir" % path)
    return totals[events.index("Ir")], calls


def valgrind_collected(path):
    """valgrind's "Collected : N" from its log file."""
    m = re.findall(r"^==\d+== Collected : (\d+)$", open(path, errors="replace").read(), re.M)
    if len(m) != 1:
        raise Failure("%s: %d 'Collected :' lines, expected 1" % (path, len(m)))
    return int(m[0])


def run_once(datadir, tdir, arm, case, n, rep, log=print):
    """Copy the template, run the script of n measured queries of case in a
    single-user backend of arm under callgrind; return the total Ir, the
    calls of the COUNTED functions and of the case's checked ones (by
    function name), and the wall time."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise Failure("valgrind is not in PATH (%s)" % os.environ.get("PATH"))
    rundir = os.path.join(datadir, "run")
    sdir = os.path.join(datadir, "scripts")
    odir = os.path.join(datadir, "out")
    ldir = os.path.join(datadir, "log")
    for d in (sdir, odir, ldir):
        os.makedirs(d, exist_ok=True)
    script = os.path.join(sdir, "%s-%d.sql" % (case, n))
    write_script(script, case, n)
    tag = "%s-%s-%d-%d" % (case, arm.name, n, rep)
    outfile = os.path.join(odir, tag + ".callgrind")
    vglog = os.path.join(ldir, tag + ".valgrind.log")
    stdout_f = os.path.join(ldir, tag + ".stdout")
    stderr_f = os.path.join(ldir, tag + ".stderr")
    for p in (outfile, vglog):
        if os.path.exists(p):
            os.unlink(p)

    if os.path.exists(rundir):
        shutil.rmtree(rundir)
    _run(["cp", "-a", tdir, rundir], "copy of the template")

    settings = dict(COMMON_SETTINGS)
    settings["shared_buffers"] = CASES[case]["shared_buffers"]
    settings.update(CASES[case]["settings"])
    settings.update(arm.settings)
    cmd = [valgrind, "--tool=callgrind", "--callgrind-out-file=" + outfile,
           "--log-file=" + vglog, "--trace-children=no"]
    cmd += ["--toggle-collect=" + fn for fn in NOT_COUNTED]
    # --toggle-collect implies --collect-atstart=no: undo that, after it
    cmd += ["--collect-atstart=yes"]
    cmd += [arm.bin("postgres"), "--single", "-D", rundir]
    for k, v in settings.items():
        cmd += ["-c", "%s=%s" % (k, v)]
    cmd.append(DBNAME)
    t0 = time.time()
    with open(script) as fin, open(stdout_f, "w") as fout, open(stderr_f, "w") as ferr:
        try:
            rc = subprocess.run(cmd, stdin=fin, stdout=fout, stderr=ferr).returncode
        except OSError as e:
            raise Failure("cannot run %s: %s" % (_quote(cmd), e))
    secs = time.time() - t0
    where = ("command: %s < %s\n--- stderr (%s):\n%s\n--- valgrind log (%s):\n%s"
             % (_quote(cmd), script, stderr_f, _tail(stderr_f), vglog, _tail(vglog)))
    if rc != 0:
        raise Failure("single-user run %s exited with %d\n%s" % (tag, rc, where))
    err = open(stderr_f, errors="replace").read()
    bad = re.findall(r"^.*\b(?:ERROR|FATAL|PANIC|WARNING):.*$", err, re.M)
    if bad:
        raise Failure("single-user run %s reported: %s\n%s" % (tag, bad[0], where))
    out = open(stdout_f, errors="replace").read()
    # one prompt before every statement, and one at the end of the input
    nstmt = len(script_lines(case, n))
    got = out.count("backend> ")
    if got != nstmt + 1:
        raise Failure("single-user run %s: %d prompts in %s, expected %d (statements "
                      "+ 1)\n%s" % (tag, got, stdout_f, nstmt + 1, where))
    pattern, count = expected_output(case, n)
    if pattern is not None:
        got = len(re.findall(pattern, out))
        if got != count:
            raise Failure("single-user run %s: %d results matching %r in %s, "
                          "expected %d\n%s" % (tag, got, pattern, stdout_f, count, where))
    if not os.path.exists(outfile):
        raise Failure("single-user run %s wrote no callgrind output %s\n%s"
                      % (tag, outfile, where))
    ir, calls = parse_callgrind(outfile, list(COUNTED.values()) + list(CASES[case]["calls"]))
    collected = valgrind_collected(vglog)
    if ir != collected:
        raise Failure("single-user run %s: callgrind totals %d != valgrind's "
                      "Collected %d (%s, %s)" % (tag, ir, collected, outfile, vglog))
    shutil.rmtree(rundir)
    log("    %-15s %-8s n=%-6d rep %d: Ir %d (%.0f s)" % (case, arm.name, n, rep, ir, secs))
    return ir, calls, secs


# ------------------------------------------------------------------ API

def run(cases, arms, datadir, k=DEFAULT_K, k_scan=DEFAULT_K_SCAN, repeat=1,
        log=print):
    """Measure the marginal Ir per query of every case for every arm.

    cases: names (see CASES; "seqscan" stands for both seqscan cases).
    arms: "NAME=BINDIR" strings, (name, bindir) or (name, bindir, {guc:
      value}) tuples (extra settings of that arm's runs), or objects with
      .bindir and .key/.name; the first arm builds the template.
    datadir: scratch directory (created), holding the template, the run
      copy, scripts, callgrind outputs and logs.
    k: measured lookups (hit, evict, evict_stride); k_scan: measured scans.
    repeat: how many times each measurement is made (arms interleaved).

    Returns one dict per (case, arm, repetition), in run order: case, arm,
    k, ir_k, ir_2k (total Ir of the K and 2K scripts), ir_per_query
    ((ir_2k - ir_k) / k), reads_per_query and allocs_per_query (the same
    difference of the calls to COUNTED's functions: with a different
    replacement rule, arms may miss a different number of times, and each
    miss costs a read and a checksum), rep, seconds (valgrind wall time,
    both scripts).  Raises Failure when anything fails.
    """
    if os.geteuid() == 0:
        raise Failure("PostgreSQL refuses to run as root: run this as an "
                      "unprivileged user (e.g. runuser -u pgnuma -- ...)")
    cases = expand_cases(cases)
    arms = [_Arm(a) for a in arms]
    if not arms:
        raise Failure("no arm given")
    names = [a.name for a in arms]
    if len(set(names)) != len(names):
        raise Failure("arm names must be unique: %s" % names)
    if k < 1 or k_scan < 1 or repeat < 1:
        raise Failure("k, k_scan and repeat must be positive")
    datadir = os.path.abspath(datadir)
    os.makedirs(datadir, exist_ok=True)
    lock = open(os.path.join(datadir, "lock"), "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        raise Failure("%s is in use by another callgrind.py (%s/lock)"
                      % (datadir, datadir))
    try:
        return _run_locked(cases, arms, datadir, k, k_scan, repeat, log)
    finally:
        lock.close()


def _run_locked(cases, arms, datadir, k, k_scan, repeat, log):
    tdir = prepare_template(datadir, arms[0], log)
    rows = []
    for case in cases:
        kk = k if CASES[case]["kind"] == "lookup" else k_scan
        for rep in range(1, repeat + 1):
            for arm in arms:
                ir1, c1, s1 = run_once(datadir, tdir, arm, case, kk, rep, log)
                ir2, c2, s2 = run_once(datadir, tdir, arm, case, 2 * kk, rep, log)
                if ir2 <= ir1:
                    raise Failure("%s %s: Ir(2K)=%d <= Ir(K)=%d" % (case, arm.name, ir2, ir1))
                for fn, want in CASES[case]["calls"].items():
                    if c2[fn] - c1[fn] != want * kk:
                        raise Failure(
                            "%s %s: %s called %d times in %d queries, expected %d "
                            "per query: not the plan this case means (see %s/out)"
                            % (case, arm.name, fn, c2[fn] - c1[fn], kk, want, datadir))
                row = dict(case=case, arm=arm.name, k=kk, ir_k=ir1, ir_2k=ir2,
                           ir_per_query=(ir2 - ir1) / kk, rep=rep,
                           seconds=round(s1 + s2, 1))
                for key, fn in COUNTED.items():
                    row[key + "_per_query"] = (c2[fn] - c1[fn]) / kk
                rows.append(row)
    return rows


def summarize(rows):
    """One dict per (case, arm), in first-seen order: case, arm, k, reps,
    mean (Ir per query over the repetitions), ratio (to the mean of the
    case's first arm), spread (max - min of the repetitions' Ir per query,
    0 with one repetition), reads and allocs (per query, mean)."""
    order, by = [], {}
    for r in rows:
        key = (r["case"], r["arm"])
        if key not in by:
            order.append(key)
            by[key] = []
        by[key].append(r)
    first_arm = {}
    for case, arm in order:
        first_arm.setdefault(case, arm)

    def mean(rs, col):
        return sum(r[col] for r in rs) / len(rs)
    out = []
    for case, arm in order:
        rs = by[(case, arm)]
        vals = [r["ir_per_query"] for r in rs]
        m = mean(rs, "ir_per_query")
        out.append(dict(case=case, arm=arm, k=rs[0]["k"], reps=len(rs), mean=m,
                        ratio=m / mean(by[(case, first_arm[case])], "ir_per_query"),
                        spread=max(vals) - min(vals),
                        reads=mean(rs, "reads_per_query"),
                        allocs=mean(rs, "allocs_per_query")))
    return out


def format_table(rows):
    """The table: Ir per query, ratio to the first arm, the repetitions'
    spread (absolute and relative), reads and buffer allocations per query."""
    lines = ["%-15s %-8s %6s %4s %14s %9s %10s %9s %8s %8s" % (
        "case", "arm", "k", "reps", "Ir/query", "ratio", "spread", "spread%",
        "reads/q", "allocs/q")]
    for r in summarize(rows):
        lines.append("%-15s %-8s %6d %4d %14.1f %9.5f %10.1f %8.5f%% %8.3f %8.3f" % (
            r["case"], r["arm"], r["k"], r["reps"], r["mean"], r["ratio"],
            r["spread"], 100 * r["spread"] / r["mean"], r["reads"], r["allocs"]))
    return "\n".join(lines)


def write_csv(rows, path):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_COLUMNS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(dict(r, ir_per_query="%.2f" % r["ir_per_query"],
                            reads_per_query="%.4f" % r["reads_per_query"],
                            allocs_per_query="%.4f" % r["allocs_per_query"]))


def main(argv=None):
    p = argparse.ArgumentParser(
        description="Instruction count per query of each arm, under callgrind, "
                    "in a single-user backend.")
    p.add_argument("--data", required=True,
                   help="scratch directory (template, run copy, outputs)")
    p.add_argument("--cases", default="hit,evict,seqscan",
                   help="comma-separated: %s (default: hit,evict,seqscan)"
                   % ", ".join(list(CASES) + list(ALIASES)))
    p.add_argument("--k", type=int, default=DEFAULT_K,
                   help="measured lookups of the lookup cases (default %d)" % DEFAULT_K)
    p.add_argument("--k-scan", type=int, default=DEFAULT_K_SCAN,
                   help="measured scans of the seqscan cases (default %d)" % DEFAULT_K_SCAN)
    p.add_argument("--repeat", type=int, default=1,
                   help="measure everything this many times (default 1)")
    p.add_argument("--csv", help="write every measurement to this CSV file")
    p.add_argument("arms", nargs="+", metavar="ARM=BINDIR")
    a = p.parse_args(argv)
    t0 = time.time()
    log = lambda m: print(m, flush=True)
    try:
        rows = run(a.cases.split(","), a.arms, a.data, k=a.k, k_scan=a.k_scan,
                   repeat=a.repeat, log=log)
    except Failure as e:
        sys.stderr.write("callgrind.py: %s\n" % e)
        return 1
    if a.csv:
        write_csv(rows, a.csv)
    print()
    print(format_table(rows))
    print("\n(%d runs in %.0f s)" % (2 * len(rows), time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
