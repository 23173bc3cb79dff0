"""Timed runs: each command once to warm up (its output counted, its requests observed), then all
commands interleaved over several rounds. Wall time, and the command's peak RSS as GNU time reports it.

Peak RSS comes from /usr/bin/time, not from this process's wait4: a child forked from Python starts
with Python's resident memory, and the kernel's maximum survives exec, so every command would show at
least the harness's ~20 MiB."""

import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field


@dataclass
class Command:
    name: str
    argv: list


@dataclass
class Result:
    command: Command
    seconds: list = field(default_factory=list)
    max_rss_kib: list = field(default_factory=list)
    entries: int = 0  # lines printed in the warm-up run
    observed: dict = field(default_factory=dict)  # e.g. requests made on a latency mount
    error: str = ""


GNU_TIME = shutil.which("time", path="/usr/bin:/bin")


def run_once(argv, count_lines=False):
    """Runs argv to completion; returns (seconds, peak RSS in KiB or None, exit code, lines printed,
    stderr tail)."""
    with tempfile.TemporaryFile() as stderr, tempfile.NamedTemporaryFile("r") as rss:
        stdout = subprocess.PIPE if count_lines else subprocess.DEVNULL
        timed = [GNU_TIME, "--quiet", "-f", "%M", "-o", rss.name, *argv] if GNU_TIME else argv
        started = time.perf_counter()
        process = subprocess.Popen(timed, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr)
        lines = 0
        if count_lines:
            while chunk := process.stdout.read(1 << 20):
                lines += chunk.count(b"\n")
            process.stdout.close()
        process.wait()
        seconds = time.perf_counter() - started
        stderr.seek(0)
        tail = stderr.read()[-2000:].decode(errors="replace")
        peak = rss.read().strip()
    return seconds, int(peak) if peak.isdigit() else None, process.returncode, lines, tail


def benchmark(commands, rounds, observer=None, log=print):
    """Warm-up run per command, then `rounds` interleaved rounds (rotating the order each round, so no
    command always runs right after the same neighbour). A command that fails is reported and dropped."""
    results = [Result(c) for c in commands]
    for result in results:
        if observer:
            observer.start()
        seconds, rss, code, lines, tail = run_once(result.command.argv, count_lines=True)
        if observer:
            result.observed = observer.stop()
        if code != 0:
            result.error = f"exit status {code}: {tail.strip()[-300:]}"
            log(f"  {result.command.name}: FAILED ({result.error})")
            continue
        result.entries = lines
        log(f"  warm-up {result.command.name}: {seconds:.3f} s, {lines:,} lines")
    live = [r for r in results if not r.error]
    for round_index in range(rounds):
        shift = round_index % max(1, len(live))
        for result in live[shift:] + live[:shift]:
            seconds, rss, code, _, tail = run_once(result.command.argv)
            if code != 0:
                result.error = f"exit status {code} in round {round_index + 1}: {tail.strip()[-300:]}"
                continue
            result.seconds.append(seconds)
            if rss is not None:
                result.max_rss_kib.append(rss)
        log(f"  round {round_index + 1}/{rounds} done")
    return results
