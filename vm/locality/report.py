#!/usr/bin/python3
"""vm/locality/report.py: the report of vm/locality.sh.

Reads the run directories of vm/locality.sh (the numamem plugin's
counts.tsv, the guest's counters, placement and session files) and writes
a markdown report with a summary per guest, the issue's targets checked
against the figures, and the (CPU node x memory node) matrices of every
window, plus a plot beside the report (PNG; skipped without matplotlib).

Every figure is derived from the raw files named in the report, so that it
can be redone by hand.  Exit status 1 when a run is not usable (a window
with no accesses to the buffer blocks, areas that do not add up): the smoke
run in CI relies on that.
"""

import argparse
import collections
import os
import re
import sys

AREAS = ("blocks", "descs", "meta", "main")
WINDOWS = ("fill", "affine", "uniform", "seqscan", "writemix")


class Run:
    """One guest: one configuration on one topology."""

    def __init__(self, path):
        self.path = path
        m = re.match(r"n(\d+)-(.*)$", os.path.basename(path.rstrip("/")))
        if not m:
            raise SystemExit(f"report.py: {path}: not a run directory (nN-CONFIG)")
        self.nodes = int(m.group(1))
        self.config = m.group(2)
        self.bin = read_text(path, "bin").strip()
        self.wall = read_text(path, "wall").strip()
        self.params = dict(line.split() for line in read_text(path, "params").splitlines())
        # counts[window][(area, kind, cpu, mem)] = count, every vCPU's; of
        # them, bg_counts: the vCPUs set apart for the server's background
        # processes (the plugin's apart=, rows "bgN", cpu = N here)
        self.counts = collections.defaultdict(collections.Counter)
        self.bg_counts = collections.defaultdict(collections.Counter)
        self.window_notes = {}
        names = {}
        with open(os.path.join(path, "counts.tsv")) as f:
            for line in f:
                line = line.rstrip("\n")
                if line.startswith("#") or line.startswith("window\t") or not line:
                    continue
                win, name, area, kind, cpu, mem, count = line.split("\t")
                names[win] = name
                bg = cpu.startswith("bg")
                key = (area, kind, int(cpu[2:] if bg else cpu), mem)
                self.counts[name][key] += int(count)
                if bg:
                    self.bg_counts[name][key] += int(count)
        self.windows = [w for w in WINDOWS if w in self.counts]
        self.timing = {}
        for line in read_text(path, "timing").splitlines():
            w, s = line.split()
            self.timing[w] = float(s)
        self.sessions = collections.defaultdict(list)
        for line in read_text(path, "sessions").splitlines():
            w, k, pid = line.split()
            self.sessions[w].append(int(k))
        self.relations = {}
        for line in read_text(path, "relations").splitlines():
            rel, pages = line.split("|") if "|" in line else line.split()
            self.relations[rel] = int(pages)

    def matrix(self, window, areas, kinds, who="all"):
        """{(cpu, mem): count} over node RAM only.  "meta" stands for all
        of the metadata's structures (areas meta.NAME; runs made before they
        were split have one area "meta").  who: "all" processes, the
        "background" processes on the vCPU set apart for them, or the
        "backends" (all but those)."""
        m = collections.Counter()
        for src, sign in {"all": ((self.counts, 1),),
                          "background": ((self.bg_counts, 1),),
                          "backends": ((self.counts, 1), (self.bg_counts, -1))}[who]:
            for (area, kind, cpu, mem), c in src[window].items():
                if (area in areas or ("meta" in areas and area.startswith("meta."))) \
                        and kind in kinds and mem.isdigit():
                    m[(cpu, int(mem))] += sign * c
        return +m

    def has_background(self):
        return any(self.bg_counts.values())

    def meta_structures(self, window):
        """The metadata's structures this window has counts for."""
        return sorted({a for (a, k, cpu, mem) in self.counts[window] if a.startswith("meta.")})

    def counters(self, window):
        """Deltas of the series' partition counters and of pg_stat_database."""
        def load(which):
            parts, db = {}, None
            for line in read_text(self.path, f"{window}.{which}").splitlines():
                # psql -F ' ': an empty field is a NULL (numa_node of
                # partitions not placed on nodes), read as -1
                f = line.split(" ")
                if f[0] == "partition":
                    parts[int(f[1])] = tuple(int(x) if x else -1 for x in f[2:6])
                elif f[0] == "db":
                    db = (int(f[1]), int(f[2]))
            return parts, db
        (pb, db_b), (pa, db_a) = load("before"), load("after")
        local = sum(pa[p][2] - pb[p][2] for p in pa)
        remote = sum(pa[p][3] - pb[p][3] for p in pa)
        allocs = sum(pa[p][1] - pb[p][1] for p in pa)
        # where no partition is placed on a node (shmem_interleave), every
        # allocation counts as served locally (pgbuffercache.sgml): that
        # says nothing of where the pages are, so it is not shown
        placed = any(pa[p][0] >= 0 for p in pa)
        return {
            "served_locally": local if placed else None,
            "served_remotely": remote if placed else None,
            "allocations": allocs if pa else None,
            "reads": db_a[0] - db_b[0],
            "hits": db_a[1] - db_b[1],
        }

    def placement(self, window):
        """{relation: {node: 4 kB pages}} after the window."""
        p = collections.defaultdict(collections.Counter)
        for line in read_text(self.path, f"{window}.placement").splitlines():
            rel, node, pages = line.split()
            p[rel][node] += int(pages)
        return p


def read_text(path, name):
    with open(os.path.join(path, name)) as f:
        return f.read()


def local_share(m):
    total = sum(m.values())
    if total == 0:
        return None
    return 100.0 * sum(c for (cpu, mem), c in m.items() if cpu == mem) / total


def per_node(m, nodes):
    total = sum(m.values())
    if total == 0:
        return None
    return [100.0 * sum(c for (cpu, mem), c in m.items() if mem == k) / total
            for k in range(nodes)]


def fmt(x, digits=1):
    return "-" if x is None else f"{x:.{digits}f}"


def fill_share(run, window):
    """Share of the fill's pages (t_k and its index) on node k."""
    pl = run.placement(window)
    on, total = 0, 0
    for rel, nodes in pl.items():
        m = re.match(r"t_(\d+)(_pkey)?$", rel)
        if not m:
            continue
        k = m.group(1)
        on += nodes.get(k, 0)
        total += sum(v for n, v in nodes.items() if n.isdigit())
    return (100.0 * on / total if total else None), total


BYTES = ("load_bytes", "store_bytes")
DRAM = ("fill", "writeback")


def summary_rows(run, window):
    sb = run.matrix(window, ("blocks", "descs"), BYTES)
    row = {
        "sb_local": local_share(sb),
        "sb_nodes": per_node(sb, run.nodes),
        "blocks_local": local_share(run.matrix(window, ("blocks",), BYTES)),
        "descs_local": local_share(run.matrix(window, ("descs",), BYTES)),
        "meta_local": local_share(run.matrix(window, ("meta",), BYTES)),
        "sb_dram_local": local_share(run.matrix(window, ("blocks", "descs"), DRAM)),
        "sb_bytes": sum(sb.values()),
        "meta_bytes": sum(run.matrix(window, ("meta",), BYTES).values()),
    }
    c = run.counters(window)
    row.update(c)
    if c["served_locally"] is not None and c["served_locally"] + c["served_remotely"] > 0:
        row["view_local"] = 100.0 * c["served_locally"] / (c["served_locally"] + c["served_remotely"])
        row["view_allocs"] = c["served_locally"] + c["served_remotely"]
    else:
        row["view_allocs"] = 0
        row["view_local"] = None
    return row


def check(runs):
    """Sanity of the raw counts: what the CI smoke run relies on."""
    problems = []
    for r in runs:
        if not r.windows:
            problems.append(f"{r.path}: no counting window in counts.tsv")
        for w in r.windows:
            blocks = sum(r.matrix(w, ("blocks",), BYTES).values())
            if blocks == 0:
                problems.append(f"{r.path}: window {w}: no access to the buffer blocks")
            total = sum(c for (a, k, cpu, mem), c in r.counts[w].items() if a == "all")
            parts = sum(c for (a, k, cpu, mem), c in r.counts[w].items() if a != "all")
            # Each access adds to "all" and to exactly one area, so the two
            # agree but for the plugin's snapshots: they copy a running
            # vCPU's counters one after another, "all" first, and what the
            # vCPU does meanwhile is in its area and not in "all" (or the
            # reverse at the window's end).  Seen: 477 of 640 million in a
            # 4-vCPU window.  An area that overlaps another or misses
            # accesses would be off by far more than a millionth.
            if abs(total - parts) > max(4096, total // 100000):
                problems.append(f"{r.path}: window {w}: areas add up to {parts}, not {total}")
            expect = r.nodes * int(r.params["sessions"])
            if len(r.sessions[w]) != expect and w != "uniform":
                problems.append(f"{r.path}: window {w}: {len(r.sessions[w])} sessions, not {expect}")
    return problems


def targets(runs, out):
    """The issue's targets that these windows can decide, as measured."""
    out.append("## Targets (issue 22), as measured here\n")
    out.append("| nodes | target | figure | holds |")
    out.append("|---:|---|---|---|")
    for r in runs:
        if r.config != "series-numa":
            continue
        n = r.nodes
        if "affine" in r.windows:
            s = summary_rows(r, "affine")["sb_local"]
            out.append(f"| {n} | node-affine load on a pool filled by its own sessions: "
                       f"shared-buffer accesses local >= 95% | {fmt(s)}% | "
                       f"{'yes' if s is not None and s >= 95 else 'no'} |")
        if "uniform" in r.windows:
            s = summary_rows(r, "uniform")["sb_nodes"]
            dev = max(abs(x - 100.0 / n) / (100.0 / n) for x in s) * 100 if s else None
            out.append(f"| {n} | uniform load: each node's share of shared-buffer traffic "
                       f"within 10% of 1/N | {' / '.join(fmt(x) for x in s)}% (worst {fmt(dev)}% off) | "
                       f"{'yes' if dev is not None and dev <= 10 else 'no'} |")
        # windows where the clock-sweep's state sees less than 64 KiB of
        # traffic (hits only) are listed but not judged
        metas = [(w, summary_rows(r, w)["meta_local"], summary_rows(r, w)["meta_bytes"])
                 for w in r.windows]
        worst = min((m for w, m, b in metas if m is not None and b >= 65536), default=None)
        out.append(f"| {n} | clock-sweep metadata accesses >= 90% local on every load | "
                   f"{', '.join(f'{w} {fmt(m)}%' + ('' if b >= 65536 else ' (not judged: under 64 KiB)') for w, m, b in metas)} | "
                   f"{'yes' if worst is not None and worst >= 90 else 'no'} |")
        if "fill" in r.windows:
            s, pages = fill_share(r, "fill")
            out.append(f"| {n} | after a restart, the fill's pages on the filling session's node >= 95% | "
                       f"{fmt(s)}% of {pages} pages | {'yes' if s is not None and s >= 95 else 'no'} |")
        # the view counts allocations, the plugin bytes accessed, hits
        # included: compared only in windows of at least 500 allocations
        diffs = []
        for w in r.windows:
            row = summary_rows(r, w)
            if row["view_local"] is not None and row["blocks_local"] is not None:
                diffs.append((w, row["view_local"] - row["blocks_local"], row["view_allocs"]))
        if diffs:
            judged = [abs(d) for w, d, a in diffs if a >= 500]
            verdict = ('yes' if max(judged) <= 5 else 'no') if judged else 'not judged'
            out.append(f"| {n} | the view's local share within 5 points of the blocks' access share | "
                       f"{', '.join(f'{w} {d:+.1f}' + ('' if a >= 500 else f' (not judged: {a} allocations)') for w, d, a in diffs)} | {verdict} |")
    out.append("")


def plot(runs, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    ncounts = sorted({r.nodes for r in runs})
    fig, axes = plt.subplots(1, len(ncounts), figsize=(6 * len(ncounts), 4), squeeze=False)
    for ax, n in zip(axes[0], ncounts):
        rs = [r for r in runs if r.nodes == n]
        windows = [w for w in WINDOWS if any(w in r.windows for r in rs)]
        width = 0.8 / max(1, len(rs))
        for i, r in enumerate(rs):
            xs = [j + i * width for j, w in enumerate(windows) if w in r.windows]
            ys = [summary_rows(r, w)["sb_local"] or 0 for w in windows if w in r.windows]
            ax.bar(xs, ys, width, label=r.config)
        ax.axhline(100.0 / n, color="grey", linestyle=":", linewidth=1)
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(windows))])
        ax.set_xticklabels(windows)
        ax.set_ylim(0, 100)
        ax.set_ylabel("shared-buffer accesses local (% of bytes)")
        ax.set_title(f"{n} nodes (dotted: 1/N)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return True


def meta_by_structure(runs, out):
    """Where the metadata's accesses go, structure by structure (runs whose
    areas split it: meta.NAME)."""
    split = [r for r in runs if any(r.meta_structures(w) for w in r.windows)]
    if not split:
        return
    out.append("## Clock-sweep metadata by structure\n")
    out.append("Per structure of meta (pg_shmem_allocations name): the share of its bytes accessed "
               "that were local, with the KiB accessed.  A structure that every allocation touches "
               "and that is not placed with its partition is local only for the backends on the "
               "node it happens to be on.\n")
    for r in split:
        names = sorted({a for w in r.windows for a in r.meta_structures(w)})
        out.append(f"### {r.nodes} nodes, {r.config}\n")
        out.append("| window | " + " | ".join(a[len("meta."):].replace("_", " ") for a in names) + " |")
        out.append("|---|" + "---:|" * len(names))
        for w in r.windows:
            cells = []
            for a in names:
                m = r.matrix(w, (a,), BYTES)
                kib = sum(m.values()) / 1024
                cells.append(f"{fmt(local_share(m))}% ({kib:.0f})" if m else "-")
            out.append(f"| {w} | " + " | ".join(cells) + " |")
        out.append("")


def background_apart(runs, out):
    """The backends' accesses apart from the background processes' (runs
    whose guest set a vCPU apart for those: LOC_APART)."""
    apart = [r for r in runs if r.has_background()]
    if not apart:
        return
    out.append("## Backends and background processes apart\n")
    out.append("In these runs the postmaster and its background processes (background writer, "
               "checkpointer, WAL writer, ...) ran on a vCPU of their own on node 0, counted apart "
               "(the plugin's apart=), and each node's sessions on the node's other vCPU.  "
               "\"backends\": the accesses of every other vCPU; \"background\": the set-apart vCPU's, "
               "local where the RAM is on node 0; \"bg share\": the background's part of the bytes.\n")
    for r in apart:
        out.append(f"### {r.nodes} nodes, {r.config}\n")
        out.append("| window | meta local, all | meta local, backends (KiB) | meta local, background (KiB) "
                   "| meta bg share | shared buffers local, backends | shared buffers bg share |")
        out.append("|---|---:|---:|---:|---:|---:|---:|")
        for w in r.windows:
            cells = [w]
            meta_all = r.matrix(w, ("meta",), BYTES)
            meta_fg = r.matrix(w, ("meta",), BYTES, "backends")
            meta_bg = r.matrix(w, ("meta",), BYTES, "background")
            sb_all = r.matrix(w, ("blocks", "descs"), BYTES)
            sb_fg = r.matrix(w, ("blocks", "descs"), BYTES, "backends")
            sb_bg = r.matrix(w, ("blocks", "descs"), BYTES, "background")
            tot = sum(meta_all.values())
            sbt = sum(sb_all.values())
            cells.append(f"{fmt(local_share(meta_all))}%")
            cells.append(f"{fmt(local_share(meta_fg))}% ({sum(meta_fg.values()) / 1024:.0f})")
            cells.append(f"{fmt(local_share(meta_bg))}% ({sum(meta_bg.values()) / 1024:.0f})")
            cells.append(f"{fmt(100.0 * sum(meta_bg.values()) / tot if tot else None)}%")
            cells.append(f"{fmt(local_share(sb_fg))}%")
            cells.append(f"{fmt(100.0 * sum(sb_bg.values()) / sbt if sbt else None)}%")
            out.append("| " + " | ".join(cells) + " |")
        out.append("")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--llc", default="")
    ap.add_argument("--command", default="vm/locality.sh")
    ap.add_argument("runs", nargs="+")
    args = ap.parse_args()
    runs = [Run(p) for p in args.runs]
    problems = check(runs)

    out = []
    out.append("# NUMA locality of memory accesses: stock 18.6 and the series\n")
    out.append(f"Generated by `{args.command}` (report: `vm/locality/report.py`); do not edit by hand.")
    out.append("Counts are from the numamem QEMU plugin (vm/README.md, \"Counting memory accesses\"):")
    out.append("every data load and store of the guest, by the node of the vCPU and the node of the RAM,")
    out.append("in bytes (a `rep movsb` counts per byte, so bytes, not instructions, are comparable),")
    out.append(f"and the line fills and write-backs of a private LLC model per vCPU (llc={args.llc}: DRAM traffic).")
    out.append("TCG guests, one vCPU per node; timing in a guest means nothing, counts and placement are real.")
    params = {tuple(sorted(r.params.items())) for r in runs}
    if len(params) != 1:
        raise SystemExit("report.py: the runs were made with different parameters")
    p = runs[0].params
    out.append(f"shared_buffers = {p['pool_mb']}MB, huge_pages = off, io_method = sync, "
               f"{p['sessions']} session(s) per node, {p['lookups']} point reads or updates "
               f"per session and window, {p['scans']} scan(s) of s per session.\n")
    out.append("Areas (virtual address ranges of the main segment, from pg_shmem_allocations): **blocks**")
    out.append("(Buffer Blocks), **descs** (Buffer Descriptors), **meta** (the clock-sweep's own state:")
    out.append("Buffer Strategy Status; with the series also Buffer Partitions, Clock Sweeps, Ghosts, and")
    out.append("before patch 0026 Trial FIFO and Balance, since then part of Clock Sweeps), **main** (the")
    out.append("rest of the segment).  \"Shared buffers\" = blocks + descs.")
    out.append("The main segment is at the postmaster's address in every backend, so these ranges hold for")
    out.append("all of them; other processes (psql, the shell) may use the same addresses for their own")
    out.append("memory and be counted too: they are idle in the windows, waiting for the server.")
    out.append("\"view served locally\": the series' pg_buffercache_partitions served_locally /")
    out.append("(served_locally + served_remotely) over the window, beside the plugin's share for blocks;")
    out.append("not shown where no partition is placed on a node (the view then counts every allocation as")
    out.append("local).\n")
    out.append("Windows: **fill** (after a restart, node k's sessions prewarm their table t_k), **affine**")
    out.append("(node k's sessions read t_k only), **uniform** (u prewarmed by one session on node 0, then")
    out.append("read from every node), **seqscan** (every session scans s, 1.5x the pool), **writemix**")
    out.append("(every session updates random rows of w, appends to h).  See vm/locality.sh.\n")
    if problems:
        out.append("**Problems with the raw counts:**\n")
        out.extend(f"- {p}" for p in problems)
        out.append("")

    out.append("## Summary\n")
    out.append("Shares are of bytes accessed in node RAM; \"per mem node\" is N0 / N1 / ...; "
               "\"fill pages\" is the share of t_k's resident 4 kB pages on node k after the window "
               "(pg_buffercache_numa); reads are pg_stat_database.blks_read over the window.\n")
    for n in sorted({r.nodes for r in runs}):
        out.append(f"### {n} nodes\n")
        out.append("| window | configuration | shared buffers local | per mem node % | blocks local | descs local "
                   "| meta local (KiB) | DRAM lines local | view served locally | reads | fill pages on node |")
        out.append("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
        for w in WINDOWS:
            for r in runs:
                if r.nodes != n or w not in r.windows:
                    continue
                row = summary_rows(r, w)
                fillp = "-"
                if w == "fill":
                    s, pages = fill_share(r, w)
                    fillp = f"{fmt(s)}%"
                nodes_s = " / ".join(fmt(x) for x in row["sb_nodes"]) if row["sb_nodes"] else "-"
                out.append(f"| {w} | {r.config} | {fmt(row['sb_local'])}% | {nodes_s} | "
                           f"{fmt(row['blocks_local'])}% | {fmt(row['descs_local'])}% | "
                           f"{fmt(row['meta_local'])}% ({row['meta_bytes'] / 1024:.0f}) | {fmt(row['sb_dram_local'])}% | "
                           f"{fmt(row['view_local'])}{'%' if row['view_local'] is not None else ''} | "
                           f"{row['reads']} | {fillp} |")
        out.append("")

    meta_by_structure(runs, out)
    background_apart(runs, out)
    targets(runs, out)

    png = os.path.splitext(args.out)[0] + ".png"
    if plot(runs, png):
        out.append(f"![shared-buffer accesses local, by window and configuration]({os.path.basename(png)})\n")

    out.append("## Matrices\n")
    out.append("Per window: KiB accessed (loads + stores), rows = the vCPU's node, columns = the RAM's node.\n")
    for r in runs:
        out.append(f"### {r.nodes} nodes, {r.config}\n")
        out.append(f"Build: `{r.bin}`; guest run {r.wall} s (host); raw: `{r.path}`.")
        rels = ", ".join(f"{k} {v}" for k, v in sorted(r.relations.items()))
        out.append(f"Relations (8 kB pages): {rels}.\n")
        for w in r.windows:
            out.append(f"**{w}** (guest {r.timing.get(w, 0):.1f} s)\n")
            hdr = "| area | cpu node | " + " | ".join(f"N{k}" for k in range(r.nodes)) + " |"
            out.append(hdr)
            out.append("|---|---:|" + "---:|" * r.nodes)
            for area in AREAS:
                m = r.matrix(w, (area,), BYTES)
                if not m:
                    continue
                for cpu in range(r.nodes):
                    cells = " | ".join(f"{m[(cpu, k)] / 1024:.0f}" for k in range(r.nodes))
                    out.append(f"| {area} | {cpu} | {cells} |")
            pl = r.placement(w)
            if pl:
                out.append("")
                out.append("Resident pages by node after the window: " + "; ".join(
                    f"{rel} " + " ".join(f"N{k}={v}" for k, v in sorted(nodes.items()))
                    for rel, nodes in sorted(pl.items())) + ".")
            out.append("")

    with open(args.out + ".tmp", "w") as f:
        f.write("\n".join(out) + "\n")
    os.replace(args.out + ".tmp", args.out)
    if problems:
        for p in problems:
            print(f"report.py: {p}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
