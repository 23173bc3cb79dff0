"""A peer at its best thread count: each `-j` of a list timed once, the fastest kept for the measured
rounds beside the peer's default. A hand-tuned peer is the one canopy's defaults must beat."""

import subprocess

import runner

# The -j values searched on a full run (bfs and fd both take -jN); smoke runs search two.
DEFAULT_JOBS = "8,16,32,64,128,256,512"
SMOKE_JOBS = "8,64"


def parse_jobs(text):
    return [int(j) for j in text.split(",") if j]


def takes_jobs(probe):
    """Whether `probe` (the program run with -j2 on something tiny) succeeds: bfs 2.6 refuses -j."""
    return subprocess.run(probe, stdin=subprocess.DEVNULL, capture_output=True, timeout=60).returncode == 0


def best(name, argv_for, jobs, log):
    """After one untimed run, times argv_for(j) once per j; returns (best j, {j: seconds}), or (None, {}) if every run failed."""
    timings = {}
    runner.run_once(argv_for(jobs[0]))  # untimed: the first run alone would meet a cold cache
    for j in jobs:
        seconds, _, code, _, tail = runner.run_once(argv_for(j))
        if code != 0:
            log(f"  search {name} -j{j}: FAILED (exit status {code}: {tail.strip()[-200:]})")
            continue
        timings[j] = seconds
    if not timings:
        return None, {}
    chosen = min(timings, key=timings.get)
    log(f"  search {name}: " + ", ".join(f"-j{j} {s:.3f} s" for j, s in timings.items()) + f"; best -j{chosen}")
    return chosen, timings
