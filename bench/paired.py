"""bench/paired.py: throughput as paired adjacent windows, with an A/A control.

Throughput on a small shared machine drifts from minute to minute by more
than the differences worth measuring, so two arms measured one after the
other, a minute apart, are not comparable.  Here every arm under test runs
its own server at the same time (each on its own copy of the data, its own
port), all started and warm, and short windows of the same pgbench workload
run against them one after the other, in a random order per round: the
windows of one round are adjacent in time and see the same machine.  Per
round and arm, the log of the ratio of its tps to the reference's; over the
rounds, the mean of those logs with a 95% bootstrap interval.  A second copy
of the reference arm (the A/A control: the same binary against itself)
shows how far the method strays when there is no difference at all.
"""

import math
import os
import random
import shutil
import subprocess
import time

BOOTSTRAP_SAMPLES = 10000


def bootstrap_interval(values, seed, samples=BOOTSTRAP_SAMPLES, level=0.95):
    """Mean of values and its percentile bootstrap interval."""
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(rng.choice(values) for _ in range(n)) / n
                   for _ in range(samples))
    lo = means[int((1 - level) / 2 * samples)]
    hi = means[min(samples - 1, int((1 + level) / 2 * samples))]
    return sum(values) / n, lo, hi


def summarize(windows, ref, seed):
    """windows: list of dict(round, arm, tps).  Returns per arm (except ref):
    dict(arm, rounds, ratio, lo, hi, halfwidth) with ratio = exp(mean log
    ratio to ref) and its 95% interval."""
    by_round = {}
    for w in windows:
        by_round.setdefault(w["round"], {})[w["arm"]] = w["tps"]
    arms = sorted({w["arm"] for w in windows} - {ref})
    out = []
    for i, arm in enumerate(arms):
        logs = [math.log(r[arm] / r[ref]) for r in by_round.values()
                if arm in r and ref in r and r[arm] > 0 and r[ref] > 0]
        if len(logs) < 2:
            continue
        mean, lo, hi = bootstrap_interval(logs, seed + i)
        out.append(dict(arm=arm, rounds=len(logs), ratio=math.exp(mean),
                        lo=math.exp(lo), hi=math.exp(hi),
                        halfwidth=(math.exp(hi) - math.exp(lo)) / 2))
    return out


class PairedServers:
    """One running server per arm, each on its own copy of a data directory.

    arms: list of (key, arm object with .bin(prog)); the data directory
    template is copied once per arm.  settings_for(i): dict of server
    settings of server i (port and socket directory are set here)."""

    def __init__(self, arms, template, workdir, base_port, sockdir, settings_for,
                 log=print):
        self.arms = arms
        self.template = template
        self.workdir = workdir
        self.base_port = base_port
        self.sockdir = sockdir
        self.settings_for = settings_for
        self.log = log
        self.started = []

    def datadir(self, i):
        return os.path.join(self.workdir, "paired-%d" % i)

    def port(self, i):
        return self.base_port + i

    def __enter__(self):
        for i, (key, arm) in enumerate(self.arms):
            d = self.datadir(i)
            shutil.rmtree(d, ignore_errors=True)
            subprocess.run(["cp", "-a", self.template, d], check=True)
            settings = dict(self.settings_for(i), port=self.port(i),
                            unix_socket_directories=self.sockdir)
            opts = " ".join("-c %s=%s" % (k, v) for k, v in settings.items())
            logfile = os.path.join(self.workdir, "paired-%d.log" % i)
            r = subprocess.run([arm.bin("pg_ctl"), "-w", "-t", "300", "-D", d,
                                "-l", logfile, "-o", opts, "start"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                tail = open(logfile).read()[-3000:] if os.path.exists(logfile) else ""
                raise RuntimeError("paired server %s (%s) did not start:\n%s%s"
                                   % (i, key, r.stdout + r.stderr, tail))
            self.started.append(i)
        return self

    def __exit__(self, *exc):
        for i in self.started:
            key, arm = self.arms[i]
            subprocess.run([arm.bin("pg_ctl"), "-w", "-t", "300", "-D",
                            self.datadir(i), "-m", "fast", "stop"],
                           capture_output=True)
        for i in self.started:
            shutil.rmtree(self.datadir(i), ignore_errors=True)
        return False


def run_concurrently(argvs):
    """Run the commands at the same time; their outputs, or an error."""
    procs = [subprocess.Popen(a, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True) for a in argvs]
    outs = [p.communicate()[0] for p in procs]
    for p, o in zip(procs, outs):
        if p.returncode != 0:
            raise RuntimeError("pgbench failed:\n" + o)
    return outs


def run_rounds(servers, pgbench_for, rounds, window, warmup, seed, log=print):
    """Warm every server up, then `rounds` rounds of one window per server,
    in a random order per round (seeded).  pgbench_for(i, seconds, seed) ->
    (list of argvs run together, parse function of the first one's output
    returning tps).  Returns the windows."""
    rng = random.Random(seed)
    n = len(servers.arms)
    for i in range(n):
        argvs, parse = pgbench_for(i, warmup, seed)
        run_concurrently(argvs)
    windows = []
    t0 = time.time()
    for rnd in range(1, rounds + 1):
        order = list(range(n))
        rng.shuffle(order)
        for i in order:
            argvs, parse = pgbench_for(i, window, seed + rnd)
            outs = run_concurrently(argvs)
            windows.append(dict(round=rnd, arm=servers.arms[i][0], tps=parse(outs[0]),
                                position=order.index(i)))
        if rnd % 5 == 0 or rnd == rounds:
            log("    round %d/%d (%.0f s)" % (rnd, rounds, time.time() - t0))
    return windows
