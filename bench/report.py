#!/usr/bin/env python3
"""Results of bench/run.sh: one JSON line per run, and the BENCHMARKS.md
section and SVG plot made from them. Standard library only.

  report.py record RESULTS --file RAW --tool s3-bench|oha --server S
            --workload W --mode M --size SIZE --concurrency C --round R
            [--rss-kib N] [--cpu-s X] [--load L]
  report.py render RESULTS --meta META --markdown OUT.md --svg OUT.svg
            [--benchmarks BENCHMARKS.md]
"""

import argparse
import html
import json
import math
import re
import statistics
import sys

BEGIN = "<!-- bench/run.sh: begin (generated, do not edit) -->"
END = "<!-- bench/run.sh: end -->"
CEILING = "nginx"
# tokio + hyper + axum answering with a fixed body (bench/src/bin/http-floor.rs):
# what any handler on the gateway's stack can reach at most.
FLOOR = "http-floor"
OURS = "s3gw"


def record(args):
    """Appends one run to RESULTS: the throughput row of s3-bench's --json
    (the TOTAL row of a mixed run) or of oha's JSON output."""
    with open(args.file) as f:
        raw = json.load(f)
    if args.tool == "s3-bench":
        rows = raw["results"]
        row = next((r for r in rows if r["op"] == "TOTAL"), rows[0])
        result = {
            "ops": row["ops"],
            "errors": sum(r["errors"] for r in rows if r["op"] != "TOTAL"),
            "ops_per_sec": row["ops_per_sec"],
            "mib_per_sec": row["mib_per_sec"],
            "p50_ms": row["p50_ms"],
            "p99_ms": row["p99_ms"],
        }
    else:
        summary = raw["summary"]
        percentiles = raw.get("latencyPercentiles", {})
        codes = raw.get("statusCodeDistribution", {})
        good = sum(n for code, n in codes.items() if code.startswith("2"))
        bad = sum(n for code, n in codes.items() if not code.startswith("2"))
        bad += sum(raw.get("errorDistribution", {}).values())
        seconds = summary.get("total") or 1
        result = {
            "ops": good,
            "errors": bad,
            # Successful answers only, as s3-bench counts.
            "ops_per_sec": good / seconds,
            "mib_per_sec": good * args.size_bytes / seconds / 2**20,
            "p50_ms": (percentiles.get("p50") or 0) * 1000,
            "p99_ms": (percentiles.get("p99") or 0) * 1000,
        }
    result.update(
        server=args.server,
        workload=args.workload,
        mode=args.mode,
        size=args.size,
        concurrency=args.concurrency,
        round=args.round,
        tool=args.tool,
        rss_kib=args.rss_kib,
        cpu_s=args.cpu_s,
        load=args.load,
    )
    with open(args.results, "a") as f:
        f.write(json.dumps(result) + "\n")
    return 0


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(value, digits=0):
    if value is None:
        return "–"
    if digits == 0 and value >= 100:
        return f"{value:,.0f}"
    return f"{value:,.{max(digits, 1 if value < 100 else 0)}f}"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "–"
    return f"{a / b:.2f}x"


class Table:
    """Medians over rounds per (workload, server)."""

    def __init__(self, runs):
        self.cells = {}
        self.workloads = []
        self.servers = []
        for run in runs:
            key = (run["workload"], run["server"])
            self.cells.setdefault(key, []).append(run)
            if run["workload"] not in self.workloads:
                self.workloads.append(run["workload"])
            if run["server"] not in self.servers:
                self.servers.append(run["server"])

    def get(self, workload, server, field):
        runs = self.cells.get((workload, server))
        if not runs:
            return None
        return median([r[field] for r in runs])

    def errors(self, workload, server):
        return sum(r["errors"] for r in self.cells.get((workload, server), []))

    def rounds(self, workload, server):
        return len(self.cells.get((workload, server), []))

    def first(self, workload):
        for server in self.servers:
            if (workload, server) in self.cells:
                return self.cells[(workload, server)][0]
        return None


def is_large(run):
    return run["size"] not in ("1KiB",)


# Issue 11's targets; peers that are neither the ceiling nor another
# s3-gateway (its baseline, or the Ozone pair, which have their own target).
NOT_PEERS = (OURS, CEILING, FLOOR, "s3gw-before", "s3gw-ozone", "ozone-s3g")
NOISE = 0.2  # two cells within 20% are "the same" on this shared machine


def syncs_per_put(probe):
    """The sync calls per PUT of a durability probe text, or None."""
    match = re.match(r"([\d.]+) sync calls, ([\d.]+) O_", probe or "")
    if not match:
        return None
    return float(match.group(1)) + float(match.group(2))


def targets(table, meta, order, names, out):
    """Each target of issue 11 this run can measure: met or not, and the ratio."""
    if OURS not in order:
        return
    rows = []

    def value(workload, server, field="ops_per_sec"):
        return table.get(workload, server, field)

    def against(workload, server, goal, what):
        ours, theirs = value(workload, OURS), value(workload, server)
        if ours is None or theirs is None:
            return
        got = ours / theirs
        rows.append((what, f"≥ {goal:.2f}x", f"{got:.2f}x", got >= goal))

    # The ceiling as the issue measured it: with oha, which does not sign.
    # s3-bench signs every request and is itself nginx's limit, so its
    # ratio stands in only when oha did not run.
    if value("oha GET 1KiB c32", CEILING) is not None:
        against("oha GET 1KiB c32", CEILING, 0.5, "1 KiB GET c32 ÷ nginx (oha)")
    else:
        against("GET 1KiB c32", CEILING, 0.5, "1 KiB GET c32 ÷ nginx (s3-bench)")
    # The same ratio for the stack alone: where it is under the goal, no
    # handler on this stack can meet it on this machine.
    if value("oha GET 1KiB c32", FLOOR) is not None and value("oha GET 1KiB c32", CEILING) is not None:
        got = value("oha GET 1KiB c32", FLOOR) / value("oha GET 1KiB c32", CEILING)
        rows.append(("the same for the HTTP floor alone (no S3 work)", "≥ 0.50x", f"{got:.2f}x", got >= 0.5))
    p50 = value("GET 1KiB c32", OURS, "p50_ms")
    if p50 is not None:
        rows.append(("1 KiB GET c32 p50", "≤ 1 ms", f"{p50:.2f} ms", p50 <= 1.0))
    against("HEAD 1KiB c32", CEILING, 0.6, "1 KiB HEAD c32 ÷ nginx")
    if "s3gw-before" in order:
        against("PUT 1KiB c32", "s3gw-before", 3.0, "1 KiB PUT c32 ÷ the baseline binary")
    probes = {s["name"]: syncs_per_put(s.get("probe")) for s in meta["servers"]}
    peers = [s for s in order if s not in NOT_PEERS]
    durable = [s for s in peers if probes.get(s)]
    durable = [s for s in durable if value("PUT 1KiB c32", s) is not None]
    if durable:
        worst = max(durable, key=lambda s: value("PUT 1KiB c32", s))
        against("PUT 1KiB c32", worst, 1.0,
                f"1 KiB PUT c32 ÷ the fastest peer that syncs ({names[worst]}; syncing: "
                + ", ".join(names[s] for s in durable) + ")")
    for mode in ("GET", "PUT", "HEAD", "MIXED"):
        for conc in sorted({table.first(w)["concurrency"] for w in table.workloads
                            if w.startswith(f"{mode} 1KiB c") and "bucket" not in w}):
            workload = f"{mode} 1KiB c{conc}"
            present = [s for s in peers if value(workload, s) is not None]
            if not present or value(workload, OURS) is None:
                continue
            worst = max(present, key=lambda s: value(workload, s))
            against(workload, worst, 1.0, f"{workload} ÷ the fastest peer ({names[worst]})")
    if value("PUT 16MiB c4", "s3gw-ozone") and value("PUT 16MiB c4", "ozone-s3g"):
        got = value("PUT 16MiB c4", "s3gw-ozone", "mib_per_sec") / value("PUT 16MiB c4", "ozone-s3g", "mib_per_sec")
        rows.append(("16 MiB PUT c4 on Ozone ÷ Ozone's S3G", "≥ 1.20x", f"{got:.2f}x", got >= 1.2))
    before = [w for w in table.workloads if w.startswith("GET 1KiB c32, 10k in bucket")]
    after = [w for w in table.workloads if w.startswith("GET 1KiB c32, ") and "same 10k keys" in w]
    if before and after and value(before[0], OURS) and value(after[0], OURS):
        got = value(after[0], OURS, "p50_ms") / value(before[0], OURS, "p50_ms")
        rows.append((f"1 KiB GET p50, {after[0].split(', ')[1].split(' (')[0]} ÷ 10k in bucket",
                     f"within {NOISE:.0%} of 1.00x", f"{got:.2f}x", abs(got - 1) <= NOISE))
    if not rows:
        return
    out.append("")
    out.append("### Issue 11's targets in this run")
    out.append("")
    out.append("| target | goal | measured | met |")
    out.append("|---|---|---|---|")
    for what, goal, got, met in rows:
        out.append(f"| {what} | {goal} | {got} | {'yes' if met else '**no**'} |")
    out.append("")
    out.append("A peer whose durability probe counted no sync call is not one \"that also "
               "fsyncs\"; it still counts for \"ahead of every peer\".")


def render(args):
    runs = load(args.results)
    with open(args.meta) as f:
        meta = json.load(f)
    table = Table(runs)
    order = [s["name"] for s in meta["servers"] if s["name"] in table.servers]
    names = {s["name"]: s["label"] for s in meta["servers"]}
    peers = [s for s in order if s not in (OURS, CEILING)]
    out = [BEGIN, ""]
    quick = meta.get("quick")
    out.append(
        f"## Side by side: s3-gateway, its peers and the HTTP ceiling"
        f"{' (a --quick run)' if quick else ''}"
    )
    out.append("")
    out.append(
        f"Generated by `bench/run.sh` at {meta['finished']} from commit "
        f"`{meta['commit']}`. Command: `{meta['command']}`. "
        f"{meta['rounds']} round(s) of {meta['duration']} per run; the order of "
        "the servers rotates each round and every cell is the median over "
        "the rounds. Machine: "
        f"{meta['cores']} cores shared with other work; load average "
        f"{meta['load_before']} before and {meta['load_after']} after "
        "(absolute numbers are noise here: read the ratios)."
    )
    if quick:
        out.append("")
        out.append(
            "**A `--quick` run**: short runs, fewer concurrencies, a smaller "
            "scale bucket. It shows that the harness works and the rough "
            "ratios; the full run (`bench/run.sh` without `--quick`) on a "
            "quiet machine gives the numbers to quote."
        )
    out.append("")
    out.append("| server | version | durability of an acknowledged PUT (configured) | sync calls per 1 KiB PUT (measured) |")
    out.append("|---|---|---|---|")
    for s in meta["servers"]:
        if s["name"] in order:
            out.append(
                f"| {s['label']} | {s.get('version', '')} | {s.get('durability', '')} | {s.get('probe', '–')} |"
            )
    out.append("")
    out.append(
        "Sync calls per PUT are counted with `strace -f` on the server over "
        f"{meta.get('probe_puts', 200)} sequential 1 KiB PUTs: fsync, "
        "fdatasync, sync_file_range and syncfs calls, plus files opened with "
        "O_SYNC or O_DSYNC (each write to those is synchronous)."
    )

    small = [w for w in table.workloads if table.first(w)["size"] == "1KiB"
             and table.first(w)["tool"] == "s3-bench" and "bucket" not in w]
    large = [w for w in table.workloads if is_large(table.first(w))
             and table.first(w)["tool"] == "s3-bench"]
    oha = [w for w in table.workloads if table.first(w)["tool"] == "oha"]
    scale = [w for w in table.workloads if "bucket" in w]

    def grid(intro, workloads, servers, cell):
        """A table of one row per workload, one column per server."""
        out.append("")
        out.append(intro)
        out.append("")
        out.append("| workload | " + " | ".join(names[s] for s in servers) + " |")
        out.append("|---|" + "---|" * len(servers))
        for w in workloads:
            out.append(f"| {w} | " + " | ".join(cell(w, s) for s in servers) + " |")

    def throughput(field, digits):
        def cell(w, s):
            value = table.get(w, s, field)
            if value is None:
                return "–"
            text = f"{fmt(value, digits)} ({fmt(table.get(w, s, 'p50_ms'), 2)})"
            if table.errors(w, s):
                text += f" !{table.errors(w, s)}"
            return text
        return cell

    def section(title, workloads, field, unit, digits=0):
        if not workloads:
            return
        out.append("")
        out.append(f"### {title}")
        grid(f"{unit}; p50 ms in brackets; errors, if any, after a !", workloads, order,
             throughput(field, digits))

    def ratios(workloads, field):
        if not workloads or OURS not in order:
            return
        out.append("")
        out.append(
            "s3-gateway ÷ each peer (above 1 means s3-gateway is faster), "
            "and each server ÷ the nginx ceiling:"
        )
        out.append("")
        has_ceiling = [w for w in workloads if table.get(w, CEILING, field)]
        columns = [f"÷ {names[p]}" for p in peers]
        ceiling_servers = [s for s in order if s != CEILING] if has_ceiling else []
        columns += [f"{names[s]} ÷ nginx" for s in ceiling_servers]
        out.append("| workload | " + " | ".join(columns) + " |")
        out.append("|---|" + "---|" * len(columns))
        for w in workloads:
            ours = table.get(w, OURS, field)
            cells = [ratio(ours, table.get(w, p, field)) for p in peers]
            ceiling = table.get(w, CEILING, field)
            cells += [ratio(table.get(w, s, field), ceiling) for s in ceiling_servers]
            out.append(f"| {w} | " + " | ".join(cells) + " |")

    def rss_mib(w, s):
        rss = table.get(w, s, "rss_kib")
        return fmt(rss / 1024) if rss else "–"

    def cpu_per_request(w, s):
        cpu, ops = table.get(w, s, "cpu_s"), table.get(w, s, "ops")
        return fmt(cpu / ops * 1e6) if cpu and ops else "–"

    def versus_s3bench(w, s):
        return ratio(table.get(w, s, "ops_per_sec"), table.get(w.replace("oha ", ""), s, "ops_per_sec"))

    def scale_cell(w, s):
        value = table.get(w, s, "ops_per_sec")
        if value is None:
            return "–"
        return (f"{fmt(value)} ({fmt(table.get(w, s, 'p50_ms'), 2)} / "
                f"{fmt(table.get(w, s, 'p99_ms'), 2)}), {rss_mib(w, s)} MiB")

    targets(table, meta, order, names, out)
    section("1 KiB objects (s3-bench)", small, "ops_per_sec", "ops/s")
    ratios(small, "ops_per_sec")
    section("Large objects (s3-bench)", large, "mib_per_sec", "MiB/s", 0)
    ratios(large, "mib_per_sec")
    if large:
        grid("Peak RSS of the server during the large-object runs (MiB; all its processes):",
             large, order, rss_mib)
    cpu_rows = [w for w in small if any(table.get(w, s, "cpu_s") for s in order)]
    if cpu_rows:
        grid("Server CPU time per request (µs; user + system of all its processes during "
             "the timed phase and the run's own preparation and cleanup, divided by the "
             "timed requests): steadier than throughput on a shared machine.",
             cpu_rows, order, cpu_per_request)
    if oha:
        section("1 KiB objects, oha on presigned URLs (the 10k objects; PUT to 10k other keys)",
                oha, "ops_per_sec", "ops/s")
        ratios(oha, "ops_per_sec")
        grid("oha ÷ s3-bench, same server and concurrency (above 1: s3-bench, which signs "
             "every request, is part of the limit):", oha, order, versus_s3bench)
    if scale:
        scale_servers = [s for s in order if any(table.get(w, s, "ops_per_sec") for w in scale)]
        out.append("")
        out.append("### Scale: a bucket of 10k and of the large object count")
        grid("ops/s (pages/s for LIST); p50 / p99 ms; the server's peak RSS during the run, MiB",
             scale, scale_servers, scale_cell)
    out.append("")
    out.append(f"![ops/s against concurrency per server]({meta['svg_link']})")
    out.append("")
    out.append(
        "The raw results (`results.jsonl`, one line per run, the servers' logs "
        "and every tool's own output) stay on the machine that made the run and "
        "are not committed. To regenerate them and this section, check out the "
        "commit above and run the command above; it writes them to "
        "`target/bench-results/<time>/` (or `OUT`)."
    )
    out.append("")
    out.append(END)
    text = "\n".join(out) + "\n"
    with open(args.markdown, "w") as f:
        f.write(text)
    with open(args.svg, "w") as f:
        f.write(plot(table, order, names))
    if args.benchmarks:
        splice(args.benchmarks, text)
    return 0


def splice(path, section):
    """Replaces the generated section of BENCHMARKS.md, or appends it."""
    with open(path) as f:
        text = f.read()
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END) + "\n?", re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: section, text)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    with open(path, "w") as f:
        f.write(text)


COLOURS = ["#d62728", "#1f77b4", "#2ca02c", "#98df8a", "#ff7f0e", "#9467bd",
           "#8c564b", "#e377c2", "#7f7f7f", "#17becf"]


def plot(table, order, names):
    """ops/s against concurrency, one panel per 1 KiB mode, one line per
    server; log-scaled concurrency axis."""
    modes = []
    points = {}
    for w in table.workloads:
        run = table.first(w)
        if run["size"] != "1KiB" or run["tool"] != "s3-bench" or "bucket" in w:
            continue
        if run["mode"] not in modes:
            modes.append(run["mode"])
        for s in order:
            value = table.get(w, s, "ops_per_sec")
            if value is not None:
                points.setdefault((run["mode"], s), []).append((run["concurrency"], value))
    pw, ph, margin = 420, 260, 60
    cols = 2
    rows = max(1, math.ceil(len(modes) / cols))
    width = cols * (pw + margin) + margin
    height = rows * (ph + margin + 20) + 80
    svg = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
    ]
    for index, mode in enumerate(modes):
        x0 = margin + (index % cols) * (pw + margin)
        y0 = 40 + (index // cols) * (ph + margin + 20)
        series = {s: sorted(points[(mode, s)]) for s in order if (mode, s) in points}
        concurrencies = sorted({c for pts in series.values() for c, _ in pts})
        top = max((v for pts in series.values() for _, v in pts), default=1) * 1.1
        lo, hi = math.log(max(1, concurrencies[0])), math.log(max(2, concurrencies[-1]))
        span = (hi - lo) or 1

        def px(c):
            return x0 + (math.log(max(1, c)) - lo) / span * pw

        def py(v):
            return y0 + ph - v / top * ph

        svg.append(f'<text x="{x0 + pw / 2}" y="{y0 - 10}" text-anchor="middle" '
                   f'font-size="13" font-weight="bold">1 KiB {html.escape(mode)}</text>')
        svg.append(f'<rect x="{x0}" y="{y0}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>')
        for step in range(5):
            v = top / 1.1 * step / 4
            svg.append(f'<line x1="{x0}" x2="{x0 + pw}" y1="{py(v):.1f}" y2="{py(v):.1f}" stroke="#eee"/>')
            svg.append(f'<text x="{x0 - 4}" y="{py(v) + 4:.1f}" text-anchor="end">{v:,.0f}</text>')
        for c in concurrencies:
            svg.append(f'<text x="{px(c):.1f}" y="{y0 + ph + 14}" text-anchor="middle">{c}</text>')
        svg.append(f'<text x="{x0 + pw / 2}" y="{y0 + ph + 30}" text-anchor="middle">concurrency</text>')
        svg.append(f'<text x="{x0 - 45}" y="{y0 + ph / 2}" text-anchor="middle" '
                   f'transform="rotate(-90 {x0 - 45} {y0 + ph / 2})">ops/s</text>')
        for s, pts in series.items():
            colour = COLOURS[order.index(s) % len(COLOURS)]
            path = " ".join(f"{px(c):.1f},{py(v):.1f}" for c, v in pts)
            dash = ' stroke-dasharray="5,3"' if s == CEILING else ""
            svg.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
            for c, v in pts:
                svg.append(f'<circle cx="{px(c):.1f}" cy="{py(v):.1f}" r="3" fill="{colour}"/>')
    x = margin
    for s in order:
        colour = COLOURS[order.index(s) % len(COLOURS)]
        svg.append(f'<rect x="{x}" y="12" width="12" height="12" fill="{colour}"/>')
        svg.append(f'<text x="{x + 16}" y="22">{html.escape(names[s])}</text>')
        x += 22 + 7 * len(names[s])
    svg.append("</svg>")
    return "\n".join(svg) + "\n"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("results")
    rec.add_argument("--file", required=True)
    rec.add_argument("--tool", choices=["s3-bench", "oha"], required=True)
    rec.add_argument("--server", required=True)
    rec.add_argument("--workload", required=True)
    rec.add_argument("--mode", required=True)
    rec.add_argument("--size", required=True)
    rec.add_argument("--size-bytes", type=int, default=0)
    rec.add_argument("--concurrency", type=int, required=True)
    rec.add_argument("--round", type=int, required=True)
    rec.add_argument("--rss-kib", type=int)
    rec.add_argument("--cpu-s", type=float)
    rec.add_argument("--load", type=float)
    ren = sub.add_parser("render")
    ren.add_argument("results")
    ren.add_argument("--meta", required=True)
    ren.add_argument("--markdown", required=True)
    ren.add_argument("--svg", required=True)
    ren.add_argument("--benchmarks")
    args = parser.parse_args(argv)
    return record(args) if args.command == "record" else render(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
