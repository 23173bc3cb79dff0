"""Medians, ratios against a baseline, a table for the terminal and the same as JSON under bench/out."""

import datetime
import json
import os
import platform
import statistics

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(BENCH_DIR, "out")


def rows(results, baseline):
    """One summary row per result; `ratio` is time / the baseline's time (baseline = 1.00)."""
    medians = {r.command.name: statistics.median(r.seconds) for r in results if r.seconds and not r.error}
    base = medians.get(baseline)
    table = []
    for r in results:
        row = {"name": r.command.name, "argv": r.command.argv, "entries": r.entries, **r.observed}
        if r.error or not r.seconds:
            row["error"] = r.error or "no samples"
        else:
            median = medians[r.command.name]
            row.update(
                median_s=median,
                min_s=min(r.seconds),
                max_s=max(r.seconds),
                samples_s=r.seconds,
                ratio=median / base if base else None,
                speedup=base / median if base else None,
                max_rss_kib=max(r.max_rss_kib) if r.max_rss_kib else None,
            )
        table.append(row)
    return table


def print_table(title, table, baseline):
    print(f"\n{title}")
    observed = any("requests" in row for row in table)
    header = f"{'command':<24} {'median':>9} {'min':>9} {'max':>9} {'ratio':>7} {'speedup':>8} {'peak RSS':>9} {'lines':>10}"
    if observed:
        header += f" {'requests':>9} {'in flight':>9}"
    print(header)
    print("-" * len(header))
    for row in table:
        line = f"{row['name']:<24} "
        if "error" in row:
            line += f"FAILED: {row['error'][:100]}"
        else:
            ratio = f"{row['ratio']:.2f}" if row["ratio"] is not None else "-"
            speedup = f"{row['speedup']:.2f}x" if row["speedup"] is not None else "-"
            rss = f"{row['max_rss_kib'] / 1024:.1f}Mi" if row["max_rss_kib"] else "-"
            line += (f"{row['median_s']:>8.3f}s {row['min_s']:>8.3f}s {row['max_s']:>8.3f}s {ratio:>7} {speedup:>8} "
                     f"{rss:>9} {row['entries']:>10,}")
            if observed:
                line += f" {row.get('requests', 0):>9,} {row.get('max_in_flight', 0):>9}"
        print(line)
    print(f"(ratio: median time / {baseline}'s; speedup: {baseline}'s median / median; "
          "peak RSS: largest of the runs, from /usr/bin/time)")


def environment(versions):
    with open("/proc/meminfo") as f:
        memory = f.readline().split()[1]
    model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "")
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(),
        "kernel": platform.release(),
        "cpus": os.cpu_count(),
        "cpu_model": model,
        "memory_kib": int(memory),
        "load_average": os.getloadavg(),
        "versions": versions,
    }


def write_json(benchmark_name, payload):
    """Writes bench/out/NAME-DATE.json and NAME-latest.json; returns the dated path."""
    os.makedirs(OUT_DIR, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    path = os.path.join(OUT_DIR, f"{benchmark_name}-{stamp}.json")
    for target in (path, os.path.join(OUT_DIR, f"{benchmark_name}-latest.json")):
        with open(target, "w") as f:
            json.dump(payload, f, indent=1)
    return path
