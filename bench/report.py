"""bench/report.py: REPORT.md and the plots, from the CSV rows of bench.py."""

import math
import os
import statistics

DEFAULT_BOUND = 64      # the series' default clock_sweep_max_advances

# The targets (issue: "a replacement rule that misses less than stock"),
# for the last series arm against stock.
T_MISSES = 0.95         # misses per transaction at most 0.95x stock's (zipf)
T_MISSES_MAX = 1.00     # and never above stock's (any workload)
T_HOT = 5.0             # hot-set hit% under one-touch scans: +5 points
T_ADV = 0.5             # adv/victim at most 0.5x stock's
T_TAIL_SLACK = 2        # tail at most the bound + 2
T_FORCED = 1.0          # forced victims under 1% of allocations (every workload)
T_COST_HIT = 1.001      # instructions per query within 0.1% on the hit path
T_COST_EVICT = 1.00     # and below stock's on the eviction path

# The targets of the per-partition clock-sweeps (issue 11), for the main arm
# against the base arm (the series before them).
T_P_MISSES = 1.01       # misses/ktx within 1% of the base arm's (zipf)
T_P_LOPSIDED = 1.03     # ... within 3% with every session in one partition
T_P_ADV = 1.05          # adv/victim at most 1.05x the base arm's
T_P_COST = 1.01         # instructions per query within 1% of the base arm's
T_P_SPREAD = 1.25       # balanced load: partitions' pass rates within 1.25x

WORKLOAD_TITLES = {
    "zipf": "zipfian point reads (s = 1.10, data 1.15x shared_buffers)",
    "zipfio": "zipfian point reads, every miss a read from the device "
              "(debug_io_direct = data)",
    "scan": "scan resistance (the zipfian hot set + one-touch scans)",
    "select": "pgbench -S, data fits in shared_buffers (overhead check)",
    "write": "writes: pgbench tpcb-like + COPY + VACUUM alongside",
    "writerate": "writes at a fixed rate: the write mix, tpcb-like and COPY "
                 "rate-limited (pgbench -R), the same work per second in every arm",
    "tpcb": "pgbench's default tpcb-like, data 3.5x shared_buffers",
    "churn": "zipfian point reads + tables created, filled, truncated and "
             "dropped alongside",
    "lopsided": "zipfian point reads, every session homed in partition 0 "
                "(debug_buffer_partition, where the arm has it)",
    "seqcount1": "serial seq scans, SELECT count(*), partitioned pgbench_accounts "
                 "1.5x shared_buffers, 1 client",
    "seqcount8": "serial seq scans, SELECT count(*), partitioned pgbench_accounts "
                 "1.5x shared_buffers, 8 clients",
    "seqoffset1": "serial seq scans, SELECT * ... OFFSET, partitioned "
                  "pgbench_accounts 1.5x shared_buffers, 1 client",
    "seqoffset8": "serial seq scans, SELECT * ... OFFSET, partitioned "
                  "pgbench_accounts 1.5x shared_buffers, 8 clients",
}

BALANCED = ("zipf", "zipfio", "select", "scan", "write", "writerate", "tpcb",
            "churn")
WRITE_MIX = ("write", "writerate")          # judged by their kinds of work
WRITE_TABLES = WRITE_MIX + ("tpcb", "churn")  # workloads with a table of writes


def spread(rs):
    """How unevenly the partitions' clock-sweeps went (median over runs):
    largest over smallest allocations per buffer, which is the rate at which
    each partition's pages come up for eviction (its hand's complete passes
    are too few in a window to compare); None for arms without a hand per
    partition."""
    vals = [r["alloc_spread"] for r in rs if r.get("alloc_spread", 0) > 0]
    return statistics.median(vals) if vals else None


def fmt_spread(rs):
    v = spread(rs)
    if v is None:
        return "-"
    return "%.2f (passes/min %.1f-%.1f)" % (v, med(rs, "passes_min"), med(rs, "passes_max"))


def med(rows, key):
    vals = [r[key] for r in rows]
    return statistics.median(vals) if vals else float("nan")


def fmt_range(rows, key, f):
    vals = sorted(r[key] for r in rows)
    if len(vals) == 1:
        return f % vals[0]
    return (f + " (" + f + "-" + f + ")") % (statistics.median(vals), vals[0], vals[-1])


def ratio(a, b):
    return a / b if b else float("nan")


def per_kind(rows, what, kind):
    """Median over rows of the write workload's reads (what "r") or backend
    writes ("wb") of one kind of work (bench.WRITE_KINDS), per 1000 of its
    transactions for tpcb-like, per COPY or VACUUM for the others."""
    scale = 1000.0 if kind == "tpcb" else 1.0
    return statistics.median([scale * r["%s_%s" % (what, kind)] / r["tx_" + kind]
                              if r["tx_" + kind] else 0.0 for r in rows])


# the victims by source that bench.py adds to the series' rows (its
# VICTIM_SOURCES, with the prefix v_)
VICTIM_COLUMNS = ["v_empty_victims", "v_trial_victims", "v_hand_victims",
                  "v_forced_victims", "v_trial_victims_written",
                  "v_hand_victims_written", "v_forced_victims_written"]


def median_table(L, headers, arm_rows, cols, extra=None):
    """A table of medians: a row per (arm, rows) of arm_rows that has every
    column of cols, the median of each, then the cells extra(rows) returns."""
    L.append("| arm | %s |" % " | ".join(headers))
    L.append("|---" * (len(headers) + 1) + "|")
    for k, rs in arm_rows:
        if rs and all(c in rs[0] for c in cols):
            cells = ["%.0f" % med(rs, c) for c in cols] + (extra(rs) if extra else [])
            L.append("| `%s` | %s |" % (k, " | ".join(cells)))


def normal_per_ktx(rows):
    """Median over rows of the normal context's writes, by backends and the
    background writer together, per 1000 transactions."""
    return statistics.median([1000.0 * (r["w_backend_normal"] + r["w_bgwriter"]) /
                              r["transactions"] if r["transactions"] else 0.0
                              for r in rows])


def write(args, arms, rows, windows, cg, machine, started, settings, params):
    out = args.out
    keys = [a.key for a in arms]
    ref = keys[0]
    main_arm = args.main
    bound = int(next((a.settings.get("clock_sweep_max_advances") for a in arms
                      if a.key == main_arm and "clock_sweep_max_advances" in a.settings),
                     DEFAULT_BOUND))
    cases = []
    for r in rows:
        c = (r["workload"], r["pool_mb"])
        if c not in cases:
            cases.append(c)

    def sel(wl, pool, arm):
        return [r for r in rows if r["workload"] == wl and r["pool_mb"] == pool
                and r["arm"] == arm]

    nruns = max(r["run"] for r in rows) if rows else 0
    L = []
    L.append("# Benchmark: the clock-sweep series against stock PostgreSQL 18.6")
    L.append("")
    L.append("Generated by `%s` (bench/bench.sh, mode **%s**), started %s UTC, "
             "%d run(s) per arm and workload, arms in a random order per run." % (
                 args.command, args.mode, started.strftime("%Y-%m-%d %H:%M"), nruns))
    if args.mode != "full":
        L.append("")
        L.append("**Quick mode: a smoke run of the pipeline (one short run, small "
                 "pools, few paired rounds). No claim may be based on these numbers.**")
    L.append("")
    L.append("## Arms")
    L.append("")
    for a in arms:
        L.append("- `%s`: %s" % (a.key, a.label))
    L.append("")
    if args.mode == "full":
        L.append("All arms are release builds (`--buildtype=release`, no cassert) with "
                 "the same meson options, built by bench/bench.sh from this "
                 "repository's patches/.")
    else:
        L.append("Quick mode builds no release arm: stock is built without "
                 "optimization, the whole series is the development build (cassert).")
    L.append("The stock arm carries bench/stock-counters.patch, which only "
             "counts (the same counters, counted where the series counts them); it is "
             "not part of the series. Every arm is driven by the stock arm's pgbench "
             "and psql.")
    L.append("")
    L.append("## Machine")
    L.append("")
    L.append("%s, %s CPUs, %s GiB, %s NUMA node(s), Linux %s. Huge pages: %s "
             "(huge_pages_status as the server reported it: %s). Transparent huge "
             "pages off during the run where the benchmark could set it." % (
                 machine["cpu"], machine["cpus"], machine["mem_gib"],
                 machine["numa_nodes"], machine["kernel"], args.huge_pages,
                 ", ".join(sorted(set(str(r["huge_pages"]) for r in rows)))))
    L.append("")
    L.append("## Metrics")
    L.append("")
    L.append("Capacity (every workload; for the measured window of each run, after "
             "prewarm and warm-up, the counters reset at its start):")
    L.append("")
    L.append("- **misses/ktx**: blocks read into shared buffers (`blks_read` of the "
             "benchmark database, pg_stat_database) per 1000 transactions of the "
             "workload's main clients; in the scan workload, the reads of "
             "pgbench_accounts and its index only (the scans' own reads are not the "
             "point; in the write workload, VACUUM's and COPY's reads count too, "
             "so there it is shown but not judged). On a real server a miss is an "
             "I/O: this is the number the rule is judged by. **vs stock**: the "
             "ratio of the medians.")
    L.append("- **hit%**: 100 * blks_hit / (blks_hit + blks_read); **hot hit%**: the "
             "same for pgbench_accounts and its index only.")
    L.append("- **adv/victim**: buffers the clock-sweep looked at (clock hand ticks, "
             "pages on trial examined) per allocation; an allocation is a victim "
             "handed out to a backend, over all its attempts (buffers a ring reuses "
             "are not counted). **tail**: the most any one allocation looked at. "
             "**forced**: allocations that ended early at the bound and took a page "
             "the rule would have kept, in % of allocations.")
    L.append("- **writes**: pg_stat_io writes of relation pages by client backends per "
             "context, by the background writer and by the checkpointer.")
    L.append("- **tps**: of one run's window, shown for information only: windows of "
             "different arms are minutes apart. Throughput claims come from the "
             "paired windows below.")
    L.append("")
    L.append("Medians over the runs; ranges in parentheses are min-max.")
    L.append("")

    L.append("## Capacity")
    for wl, pool in cases:
        L.append("")
        L.append("### %s, shared_buffers = %d MB" % (WORKLOAD_TITLES.get(wl, wl), pool))
        L.append("")
        hot = wl == "scan"
        seq = wl.startswith("seq")
        hdr = ("| arm | misses/ktx | vs stock | hit%% |%s adv/victim | vs stock | tail | "
               "forced %% | tps |%s partition spread |" % (
                   " hot hit% | scans/s |" if hot else "",
                   " median latency ms |" if seq else ""))
        L.append(hdr)
        L.append("|" + "---|" * (hdr.count("|") - 1))
        s_rows = sel(wl, pool, ref)
        for k in keys:
            rs = sel(wl, pool, k)
            if not rs:
                continue
            forced = statistics.median([100.0 * r["forced_victims"] / r["allocations"]
                                        if r["allocations"] else 0 for r in rs])
            line = "| `%s` | %s | %.3f | %s |" % (
                k, fmt_range(rs, "misses_per_ktx", "%.2f"),
                ratio(med(rs, "misses_per_ktx"), med(s_rows, "misses_per_ktx")),
                fmt_range(rs, "hit_pct", "%.3f"))
            if hot:
                line += " %s | %.2f |" % (fmt_range(rs, "hot_hit_pct", "%.3f"),
                                          med(rs, "scans_per_s"))
            line += " %s | %.2f | %s | %.3f | %.0f |" % (
                fmt_range(rs, "adv_per_victim", "%.2f"),
                ratio(med(rs, "adv_per_victim"), med(s_rows, "adv_per_victim")),
                fmt_range(rs, "max_advances", "%d"), forced, med(rs, "tps"))
            if seq:
                line += " %s |" % fmt_range(rs, "median_latency_ms", "%.1f")
            line += " %s |" % fmt_spread(rs)
            L.append(line)
        L.append("")
        L.append("Stock: %.0f allocations and %.0f transactions in the window (median). "
                 "Partition spread: how unevenly the partitions' clock-sweeps went, "
                 "largest over smallest allocations per buffer (the pace at which "
                 "each partition's pages come up for eviction), with the range of "
                 "the hands' complete passes per minute, for arms with a hand per "
                 "partition." % (med(s_rows, "allocations"), med(s_rows, "transactions")))
        if wl == "writerate" and "write_rate_tpcb" in params:
            L.append("")
            L.append("The rate asked for: %d tpcb-like transactions per second; kept: %s "
                     "(median tps; an arm well below it did less work than the others, "
                     "and its figures are not comparable)." % (
                         params["write_rate_tpcb"], ", ".join(
                             "`%s` %.0f" % (k, med(sel(wl, pool, k), "tps"))
                             for k in keys if sel(wl, pool, k))))
        if wl in WRITE_TABLES:
            L.append("")
            L.append("Writes in the window (median), by who and in which context "
                     "(the main clients' transactions differ between arms: the "
                     "target compares backends' writes per 1000 of them):")
            L.append("")
            cols = ["w_backend_normal", "w_backend_bulkwrite", "w_backend_vacuum",
                    "w_bgwriter", "w_checkpointer"]
            L.append("The last column is the normal context's writes, backends' and "
                     "background writer's, per 1000 transactions: the dirty pages "
                     "that the pool's replacement made someone write, whoever wrote "
                     "them (the background writer writes at most "
                     "bgwriter_lru_maxpages a round, so an arm that runs faster "
                     "leaves more of them to its backends).")
            L.append("")
            median_table(L, ["backends, normal", "backends, bulkwrite",
                             "backends, vacuum", "background writer",
                             "checkpointer", "normal per ktx"],
                         [(k, sel(wl, pool, k)) for k in keys], cols,
                         lambda rs: ["%.1f" % normal_per_ktx(rs)])
            vrows = [(k, rs) for k, rs in ((k, sel(wl, pool, k)) for k in keys)
                     if rs and all(isinstance(rs[0].get(c), int)
                                   for c in VICTIM_COLUMNS)]
            if vrows:
                L.append("")
                L.append("Victims in the window (median), by where the clock-sweep "
                         "found them (pg_buffercache_partitions; stock does not count "
                         "them), and those of them that the allocating backend had to "
                         "write out itself:")
                L.append("")
                median_table(L, ["empty", "on trial", "hand", "forced",
                                 "written: on trial", "written: hand",
                                 "written: forced"], vrows, VICTIM_COLUMNS)
        if wl in WRITE_MIX and s_rows and s_rows[0].get("tx_tpcb", "") != "":
            L.append("")
            L.append("Per kind of work (pg_stat_statements): pages read and pages "
                     "written by the backends, per 1000 tpcb-like transactions and "
                     "per COPY and VACUUM, medians of the runs' ratios, and against "
                     "stock's (COPY's and VACUUM's share of a run changes with its "
                     "speed; these do not):")
            L.append("")
            L.append("| arm | tpcb-like reads/ktx | vs stock | tpcb-like writes/ktx | "
                     "vs stock | reads/COPY | writes/COPY | reads/VACUUM | "
                     "writes/VACUUM | COPYs, VACUUMs |")
            L.append("|---|---|---|---|---|---|---|---|---|---|")
            for k in keys:
                rs = sel(wl, pool, k)
                if not rs or rs[0].get("tx_tpcb", "") == "":
                    continue
                L.append("| `%s` | %.1f | %.3f | %.1f | %.3f | %.0f | %.0f | %.0f | "
                         "%.0f | %.0f, %.0f |" % (
                             k, per_kind(rs, "r", "tpcb"),
                             ratio(per_kind(rs, "r", "tpcb"),
                                   per_kind(s_rows, "r", "tpcb")),
                             per_kind(rs, "wb", "tpcb"),
                             ratio(per_kind(rs, "wb", "tpcb"),
                                   per_kind(s_rows, "wb", "tpcb")),
                             per_kind(rs, "r", "copy"), per_kind(rs, "wb", "copy"),
                             per_kind(rs, "r", "vacuum"), per_kind(rs, "wb", "vacuum"),
                             med(rs, "tx_copy"), med(rs, "tx_vacuum")))

    # paired throughput
    paired_res = []
    pref = args.base or ref
    if windows:
        import paired
        L.append("")
        L.append("## Throughput: paired windows")
        L.append("")
        L.append("The reference arm `%s`, a second copy of it (`%s#2`, the A/A control)%s "
                 "and `%s` run at the same time, each on its own copy of the data, warm; "
                 "windows of %s s of the workload alternate between them in a random "
                 "order per round. Per round, the log of each arm's tps over the "
                 "reference's; the table gives exp(mean) and its 95%% bootstrap "
                 "interval. The A/A row shows how far the method strays with no "
                 "difference at all; its half-width is the smallest effect this machine "
                 "can show. With one client, tps is the inverse of the latency per "
                 "query." % (
                     pref, pref, ", stock" if pref != ref else "", main_arm,
                     "/".join(sorted({str(w.get("window", "")) for w in windows})
                              or ["?"])))
        L.append("")
        L.append("| workload | arm | tps ratio to `%s` | 95%% interval | half-width | "
                 "rounds | contains or above 1.00? |" % pref)
        L.append("|---|---|---|---|---|---|---|")
        pcases = []
        for w in windows:
            c = (w["workload"], w["pool_mb"])
            if c not in pcases:
                pcases.append(c)
        for wl, pool in pcases:
            ws = [w for w in windows if w["workload"] == wl and w["pool_mb"] == pool]
            for res in paired.summarize(ws, pref, seed=pool):
                ok = res["hi"] >= 1.0
                paired_res.append(dict(res, workload=wl, pool_mb=pool))
                L.append("| %s %dMB | `%s` | %.3f | %.3f-%.3f | %.3f | %d | %s |" % (
                    wl, pool, res["arm"], res["ratio"], res["lo"], res["hi"],
                    res["halfwidth"], res["rounds"], "yes" if ok else "**no**"))

    # callgrind
    if cg:
        L.append("")
        L.append("## Cost: instructions per query (callgrind)")
        L.append("")
        L.append("One backend (`postgres --single`) runs a fixed script of queries under "
                 "valgrind's callgrind; the cost per query is the difference in "
                 "instructions between a script of 2K and one of K queries, divided by "
                 "K, so that startup and shutdown cancel out. Repeated runs agree to "
                 "about 0.001%. `hit`: indexed point lookups with the data in a pool "
                 "larger than it; `evict`: the same lookups through a pool much smaller "
                 "than the data, so that most of them evict a buffer (an arm that "
                 "misses less also reads less: see reads/query); `evict_stride`: "
                 "lookups of every 67th row, so that every arm misses equally often "
                 "and only the cost of the eviction path differs; `seqscan_count`, "
                 "`seqscan_offset`: `SELECT count(*)` and `SELECT * ... OFFSET "
                 "1000000000` of pgbench_accounts through a 16MB pool (a ring). "
                 "Single-user mode has no background writer.")
        L.append("")
        L.append("| case | arm | instructions per query | ratio to stock | reads/query |")
        L.append("|---|---|---|---|---|")
        for c in sorted({r["case"] for r in cg}, key=lambda x: [r["case"] for r in cg].index(x)):
            base = [r for r in cg if r["case"] == c and r["arm"] == ref]
            for r in [r for r in cg if r["case"] == c]:
                L.append("| %s | `%s` | %.0f | %.4f | %s |" % (
                    c, r["arm"], r["ir_per_query"],
                    ratio(r["ir_per_query"], base[0]["ir_per_query"]) if base else
                    float("nan"), "%.3f" % r["reads_per_query"]
                    if isinstance(r.get("reads_per_query"), (int, float)) else ""))

    # targets
    target, missed = targets_table(L, "Targets (arm `%s` against stock)" % main_arm,
                                   "stock", "`%s`" % main_arm)

    for wl, pool in cases:
        case = "%s %dMB" % (wl, pool)
        s_rows, m_rows = sel(wl, pool, ref), sel(wl, pool, main_arm)
        if not m_rows or not s_rows:
            continue
        s_m, m_m = med(s_rows, "misses_per_ktx"), med(m_rows, "misses_per_ktx")
        r_m = ratio(m_m, s_m)
        if wl == "zipf":
            target(case, "misses/ktx <= %.2fx stock" % T_MISSES, "%.2f" % s_m,
                   "%.2f (%.3fx)" % (m_m, r_m), r_m <= T_MISSES)
        elif wl not in WRITE_MIX:
            # the write mix's are its tpcb-like transactions' reads, below
            target(case, "misses/ktx <= %.2fx stock" % T_MISSES_MAX, "%.2f" % s_m,
                   "%.2f (%.3fx)" % (m_m, r_m), r_m <= T_MISSES_MAX)
        if wl in ("zipf", "zipfio", "scan"):
            s_a, m_a = med(s_rows, "adv_per_victim"), med(m_rows, "adv_per_victim")
            target(case, "adv/victim <= %.1fx stock" % T_ADV, "%.2f" % s_a,
                   "%.2f (%.2fx)" % (m_a, ratio(m_a, s_a)), m_a <= T_ADV * s_a)
            m_t = max(r["max_advances"] for r in m_rows)
            target(case, "tail <= bound + %d = %d (every run)" % (T_TAIL_SLACK,
                                                                  bound + T_TAIL_SLACK),
                   "%.0f" % med(s_rows, "max_advances"), "%d" % m_t,
                   m_t <= bound + T_TAIL_SLACK)
        f = max(100.0 * r["forced_victims"] / r["allocations"] if r["allocations"]
                else 0 for r in m_rows)
        target(case, "forced victims < %.0f%% of allocations (every run)" % T_FORCED,
               "0", "%.3f%%" % f, f < T_FORCED)
        if wl == "scan":
            sh, mh = med(s_rows, "hot_hit_pct"), med(m_rows, "hot_hit_pct")
            target(case, "hot hit%% >= stock + %.0f points" % T_HOT, "%.3f" % sh,
                   "%.3f (%+.3f)" % (mh, mh - sh), mh >= sh + T_HOT)
        if wl in WRITE_MIX + ("tpcb",) and "w_backend_normal" in m_rows[0]:
            def per_ktx(rs):
                return statistics.median([1000.0 * r["w_backend_normal"] / r["transactions"]
                                          if r["transactions"] else 0 for r in rs])
            sw, mw = per_ktx(s_rows), per_ktx(m_rows)
            target(case, "writes by backends (normal context) per ktx <= stock",
                   "%.1f" % sw, "%.1f" % mw, mw <= sw)
        if wl in WRITE_MIX and m_rows[0].get("tx_tpcb", "") != "" and \
                s_rows[0].get("tx_tpcb", "") != "":
            for what, name in (("r", "reads"), ("wb", "backends' writes")):
                sk, mk = per_kind(s_rows, what, "tpcb"), per_kind(m_rows, what, "tpcb")
                target(case, "tpcb-like %s per ktx of its own <= stock" % name,
                       "%.1f" % sk, "%.1f (%.3fx)" % (mk, ratio(mk, sk)), mk <= sk)
    for res in paired_res if pref == ref else []:
        case = "%s %dMB" % (res["workload"], res["pool_mb"])
        if res["arm"] == main_arm:
            target(case, "paired tps interval contains or lies above 1.00",
                   "1", "%.3f (%.3f-%.3f)" % (res["ratio"], res["lo"], res["hi"]),
                   res["hi"] >= 1.0)
        elif res["arm"].endswith("#2"):
            target(case, "A/A control's interval contains 1.00", "1",
                   "%.3f (%.3f-%.3f)" % (res["ratio"], res["lo"], res["hi"]),
                   res["lo"] <= 1.0 <= res["hi"])
    # against the counters arm, and against pristine 18.6 where it was
    # measured: the counters patch adds work to stock's own path
    for c in sorted({r["case"] for r in cg}):
        mine = [r for r in cg if r["case"] == c and r["arm"] == main_arm]
        for against in (ref, "pristine"):
            base = [r for r in cg if r["case"] == c and r["arm"] == against]
            if not base or not mine:
                continue
            rr = ratio(mine[0]["ir_per_query"], base[0]["ir_per_query"])
            if c == "evict":
                target("callgrind " + c, "instructions/query below %s's" % against,
                       "%.0f" % base[0]["ir_per_query"], "%.0f (%.4fx)" % (
                           mine[0]["ir_per_query"], rr), rr < T_COST_EVICT)
            else:
                target("callgrind " + c, "instructions/query within %.1f%% of %s's" % (
                    100 * (T_COST_HIT - 1), against),
                    "%.0f" % base[0]["ir_per_query"], "%.0f (%.4fx)" % (
                        mine[0]["ir_per_query"], rr), rr <= T_COST_HIT)
    end_targets(L, missed, "All targets met in this run set.")

    if args.base:
        partition_targets(L, args.base, main_arm, cases, sel, paired_res, cg, bound)

    # plots
    plots = plot(out, rows, keys, ref, cases, paired_res)
    if plots:
        L.append("")
        L.append("## Plots")
        L.append("")
        for title, f in plots:
            L.append("![%s](%s)" % (title, f))
            L.append("")

    # settings
    L.append("## Settings")
    L.append("")
    L.append("Server (every arm; `shared_buffers` per workload; the series' arms also "
             "`shared_buffers_numa = on`; frontier arms their settings after `@`; the "
             "zipfio workload `debug_io_direct = data`):")
    L.append("")
    L.append("```")
    for k, v in settings.items():
        L.append("%s = %s" % (k, v))
    L.append("```")
    L.append("")
    L.append("Data sets (one cluster, initdb'd by the stock arm, shared by all arms): " +
             ", ".join("`%s`: pgbench scale %d%s" % (
                 db, sc, " + %d tables of %d MB for one-touch scans" % (
                     params["scan_tables"], mb) if mb else "")
                 for db, (sc, mb) in sorted(params["datasets"].items())) + ".")
    L.append("")
    L.append("Each capacity measurement: start the server, `pg_prewarm` pgbench_accounts "
             "and its index, warm up with the workload for %d s, reset the counters "
             "and pg_stat_io, measure for %d s, stop the server. The OS page cache "
             "holds all data files (read once before the first run), so a miss costs "
             "a copy, not an I/O, for every arm alike, except in the zipfio workload." % (
                 args.conf["warmup"], args.conf["measure"]))
    L.append("")
    L.append("Workloads (`-c %d -j %d` unless said otherwise, `--random-seed` per run, "
             "the same for every arm of a run):" % (params["clients"], params["threads"]))
    L.append("")
    L.append("- **zipf**: `scripts/zipf.sql`, `-M prepared`: `random_zipfian(1, "
             "naccounts, %.2f)` picks a rank, `permute()` with a fixed seed maps ranks to "
             "aids, so the hot rows are spread over the table's pages (the seed-004 "
             "replica). The table and its index are 1.14x to 1.17x the pool. Why: the "
             "case where stock's clock-sweep does the most work per victim." % params["zipf_s"])
    L.append("- **zipfio**: the same with `debug_io_direct = data`: misses are reads "
             "from the device, so that a change in misses shows in throughput.")
    L.append("- **scan**: the zipf script with %d clients (`-j 1`), plus %d clients "
             "(`-j 1`) running `scripts/scan.sql`: `SELECT count(*)` of the next of %d "
             "tables of %.0f%% of shared_buffers each (under the quarter above which a "
             "scan uses a ring), in turn for all clients together (a sequence), so "
             "that a table comes round again only after about %.1f pools of others: "
             "truly one-touch. Why: one-touch pages must not push out the hot set; "
             "reported as hot hit%%." % (
                 params["clients"] - params["scan_clients"], params["scan_clients"],
                 params["scan_tables"], 100 * params["scan_fraction"],
                 (params["scan_tables"] - 1) * params["scan_fraction"]))
    L.append("- **select**: `pgbench -S -M prepared` over a data set of %.0f%% of "
             "shared_buffers. Why: no evictions at all once prewarmed, so any difference "
             "is the cost of the series' bookkeeping on the hit path." % (
                 100 * params["select_fraction"]))
    L.append("- **write**: pgbench's tpcb-like script, %d clients (`-j 1`), over the "
             "zipf data set, with one client running `COPY` of %d rows (a bulk-write "
             "ring) and `TRUNCATE` in a loop, and one running `VACUUM pgbench_accounts` "
             "(a vacuum ring) every half second. Why: rings must keep their buffers "
             "and write their own pages, and dirty pages must be written by the "
             "background writer rather than by backends." % (
                 params["write_clients"], params["copy_rows"]))
    if "write_rate_tpcb" in params:
        L.append("- **writerate**: the write workload at a fixed rate, `pgbench -R`: "
                 "%d tpcb-like transactions per second over all its clients, %d COPYs "
                 "per second; the same seed gives every arm of a run the same "
                 "schedule. Why: in the write workload the background writer cleans "
                 "at most `bgwriter_lru_maxpages` a round in every arm, so an arm "
                 "that runs faster leaves more of its writes to the backends; here "
                 "every arm does the same work per second, and what its backends "
                 "write is the rule's doing." % (
                     params["write_rate_tpcb"], params["write_rate_copy"]))
    L.append("")
    L.append("Every measurement is in `runs.csv` (capacity), `paired.csv` (throughput "
             "windows) and `callgrind.csv` (cost). To reproduce: `%s` from a clean "
             "checkout." % args.command)
    L.append("")

    discussion = os.path.join(os.path.dirname(os.path.abspath(__file__)), "DISCUSSION.md")
    if args.mode == "full" and os.path.exists(discussion):
        L.append(open(discussion).read().rstrip())
        L.append("")

    with open(os.path.join(out, "REPORT.md"), "w") as f:
        f.write("\n".join(L))


def targets_table(L, title, ref_label, main_label):
    """Start a table of targets under title; returns target(case, what,
    reference value, main value, met?), which adds a row, and the list of
    the missed ones it fills."""
    L.append("")
    L.append("## " + title)
    L.append("")
    L.append("| case | target | %s | %s | met? |" % (ref_label, main_label))
    L.append("|---|---|---|---|---|")
    missed = []

    def target(case, what, r, v, ok):
        L.append("| %s | %s | %s | %s | %s |" % (case, what, r, v, "yes" if ok else "**no**"))
        if not ok:
            missed.append("%s: %s" % (case, what))
    return target, missed


def end_targets(L, missed, all_met):
    L.append("")
    if missed:
        L.append("Missed: " + "; ".join(missed) + ". See the discussion below.")
    else:
        L.append(all_met)


def partition_targets(L, base, main_arm, cases, sel, paired_res, cg, bound):
    """The targets of the per-partition clock-sweeps: the main arm against the
    series before them (the base arm)."""
    target, missed = targets_table(
        L, "Targets of the per-partition clock-sweeps (`%s` against `%s`)" % (
            main_arm, base), "`%s`" % base, "`%s`" % main_arm)

    for wl, pool in cases:
        case = "%s %dMB" % (wl, pool)
        b_rows, m_rows = sel(wl, pool, base), sel(wl, pool, main_arm)
        if not b_rows or not m_rows:
            continue
        if wl in ("zipf", "zipfio", "lopsided"):
            limit = T_P_LOPSIDED if wl == "lopsided" else T_P_MISSES
            b_m, m_m = med(b_rows, "misses_per_ktx"), med(m_rows, "misses_per_ktx")
            r_m = ratio(m_m, b_m)
            target(case, "misses/ktx <= %.2fx" % limit, "%.2f" % b_m,
                   "%.2f (%.3fx)" % (m_m, r_m), r_m <= limit)
            b_a, m_a = med(b_rows, "adv_per_victim"), med(m_rows, "adv_per_victim")
            target(case, "adv/victim <= %.2fx" % T_P_ADV, "%.2f" % b_a,
                   "%.2f (%.3fx)" % (m_a, ratio(m_a, b_a)), m_a <= T_P_ADV * b_a)
        m_t = max(r["max_advances"] for r in m_rows)
        target(case, "tail <= bound + %d = %d (every run)" % (
            T_TAIL_SLACK, bound + T_TAIL_SLACK),
            "%.0f" % med(b_rows, "max_advances"), "%d" % m_t,
            m_t <= bound + T_TAIL_SLACK)
        sp = spread(m_rows)
        if wl in BALANCED + ("lopsided",) and sp is not None:
            target(case, "partitions' pace (allocations/buffer) within %.2fx" % T_P_SPREAD, "-",
                   fmt_spread(m_rows), sp <= T_P_SPREAD)
    for res in paired_res:
        if res["arm"] != main_arm:
            continue
        case = "%s %dMB" % (res["workload"], res["pool_mb"])
        target(case, "paired tps interval contains or lies above 1.00", "1",
               "%.3f (%.3f-%.3f)" % (res["ratio"], res["lo"], res["hi"]),
               res["hi"] >= 1.0)
    for c in sorted({r["case"] for r in cg}):
        b = [r for r in cg if r["case"] == c and r["arm"] == base]
        m = [r for r in cg if r["case"] == c and r["arm"] == main_arm]
        if not b or not m:
            continue
        rr = ratio(m[0]["ir_per_query"], b[0]["ir_per_query"])
        target("callgrind " + c, "instructions/query within %.0f%%" % (100 * (T_P_COST - 1)),
               "%.0f" % b[0]["ir_per_query"],
               "%.0f (%.4fx)" % (m[0]["ir_per_query"], rr), rr <= T_P_COST)
    end_targets(L, missed,
                "All targets of the per-partition clock-sweeps met in this run set.")


def plot(out, rows, keys, ref, cases, paired_res):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    made = []

    def sel(wl, pool, arm):
        return [r for r in rows if r["workload"] == wl and r["pool_mb"] == pool
                and r["arm"] == arm]

    def bars(fname, title, ylabel, value, cs, log=False, hline=None):
        fig, ax = plt.subplots(figsize=(8, 4.5))
        width = 0.8 / len(keys)
        for i, k in enumerate(keys):
            xs, ys = [], []
            for j, (wl, pool) in enumerate(cs):
                rs = sel(wl, pool, k)
                if rs:
                    v = value(rs, wl, pool)
                    if v is not None and not math.isnan(v):
                        xs.append(j + i * width)
                        ys.append(v)
            ax.bar(xs, ys, width, label=k)
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(cs))])
        ax.set_xticklabels(["%s %dMB" % c for c in cs], fontsize="small")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        if log:
            ax.set_yscale("log")
        if hline is not None:
            ax.axhline(hline, color="gray", linestyle="--", linewidth=1)
        ax.legend(fontsize="x-small")
        fig.tight_layout()
        fig.savefig(os.path.join(out, fname), dpi=90)
        plt.close(fig)
        made.append((title, fname))

    miss_cases = [c for c in cases if c[0] != "select"]
    if miss_cases:
        bars("misses.png", "Misses per transaction relative to stock (median)",
             "misses/ktx / stock",
             lambda rs, wl, pool: ratio(med(rs, "misses_per_ktx"),
                                        med(sel(wl, pool, ref), "misses_per_ktx")),
             miss_cases, hline=1.0)
    sweep = [c for c in cases if c[0] in ("zipf", "zipfio", "scan")]
    if sweep:
        bars("adv_per_victim.png", "Buffers looked at per victim (median)", "adv/victim",
             lambda rs, wl, pool: med(rs, "adv_per_victim"), sweep)
        bars("tail.png", "Most buffers one allocation looked at (median of runs)",
             "advances", lambda rs, wl, pool: med(rs, "max_advances"), sweep, log=True,
             hline=DEFAULT_BOUND + T_TAIL_SLACK)
    if paired_res:
        fig, ax = plt.subplots(figsize=(8, 4.5))
        labels = []
        for i, r in enumerate(paired_res):
            ax.errorbar([i], [r["ratio"]], yerr=[[r["ratio"] - r["lo"]], [r["hi"] - r["ratio"]]],
                        fmt="o", capsize=4,
                        color="gray" if r["arm"].endswith("#2") else "C0")
            labels.append("%s %d\n%s" % (r["workload"], r["pool_mb"], r["arm"]))
        ax.axhline(1.0, color="gray", linestyle="--", linewidth=1)
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, fontsize="x-small")
        ax.set_ylabel("tps / reference arm (95% interval)")
        ax.set_title("Paired throughput windows (gray: A/A control)")
        fig.tight_layout()
        fig.savefig(os.path.join(out, "paired.png"), dpi=90)
        plt.close(fig)
        made.append(("Paired throughput windows", "paired.png"))
    return made
