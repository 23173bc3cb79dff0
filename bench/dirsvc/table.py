#!/usr/bin/env python3
"""Renders the JSON reports of bench/dirsvc/run.sh as Markdown tables (mean rate over iterations)."""
import json
import pathlib
import re
import sys

run = pathlib.Path(sys.argv[1])
reports = {}
for path in sorted(run.glob("*.json")):
    [report] = json.loads(path.read_text())
    reports[path.stem] = report


def rates(report):
    return [round(phase["mean"]) for phase in report["phases"]]


def per_sync(report):
    servers = report["servers"]
    commits = max(servers["commits"], 1)
    return f"{servers['requests'] / commits:.1f} ({servers['sync_seconds'] * 1e3 / commits:.2f})"


def cpu(report):
    busy = (report["servers"]["cpu_seconds"] + report["client_cpu_seconds"]) / report["wall_seconds"]
    return f"{busy:.2f} of {report['cores']}"


def key(name):
    numbers = [int(n) for n in re.findall(r"\d+", name)]
    return numbers, name


print((run / "conditions.txt").read_text().strip().replace("\n", "  \n"))
print()
print("Mean operations/s over iterations (create / stat / remove); every dirsvc create is fsynced.")
print()
print("| servers | clients | distributed | giga (1 → splits) | vanilla (1 partition) | distributed: requests per fsync (ms), cores busy |")
print("|---:|---:|---|---|---|---|")
rows = sorted({tuple(map(int, re.match(r"s(\d+)-p(\d+)", n).groups())) for n in reports if n.startswith("s")})
for s, p in rows:
    cells = []
    for mode in ("distributed", "giga", "vanilla"):
        report = reports.get(f"s{s}-p{p}-{mode}")
        cells.append(" / ".join(f"{r:,}" for r in rates(report)) if report else "")
    distributed = reports.get(f"s{s}-p{p}-distributed")
    cells.append(f"{per_sync(distributed)}, {cpu(distributed)}" if distributed else "")
    print(f"| {s} | {p} | " + " | ".join(cells) + " |")

print()
print("| local file system (posix, no fsync) | clients | create / stat / remove |")
print("|---|---:|---|")
for name in sorted((n for n in reports if n.endswith("-posix")), key=key):
    report = reports[name]
    print(f"| posix | {report['clients']} | " + " / ".join(f"{r:,}" for r in rates(report)) + " |")

print()
print("| servers | clients | in flight per client | create / stat / remove | requests per fsync (ms per fsync) | cores busy |")
print("|---:|---:|---:|---|---:|---:|")
for name in sorted((n for n in reports if n.endswith("-window")), key=key):
    report = reports[name]
    s, p = map(int, re.match(r"s(\d+)-p(\d+)", name).groups())
    window = re.search(r"(\d+) operations in flight", report["target"]).group(1)
    print(f"| {s} | {p} | {window} | " + " / ".join(f"{r:,}" for r in rates(report)) + f" | {per_sync(report)} | {cpu(report)} |")

print()
print("GIGA+ growth (giga runs): partitions active after creation, entries per partition (max/min), probes")
print()
print("| servers | clients | active | entries min–max | probes: 1 / 2 / more | requests per fsync (ms per fsync) |")
print("|---:|---:|---:|---|---|---:|")
for name in sorted((n for n in reports if n.endswith("-giga")), key=key):
    report = reports[name]
    s, p = map(int, re.match(r"s(\d+)-p(\d+)", name).groups())
    balance = report["balance"][-1]
    entries = balance["entries"]
    counts = report["probes"]["counts"]
    print(
        f"| {s} | {p} | {len(entries)} | {min(entries)}–{max(entries)} | "
        f"{counts[0]} / {counts[1]} / {sum(counts[2:])} | {per_sync(report)} |"
    )
