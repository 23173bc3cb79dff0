"""Finding the programs benchmarks run: peers (PATH, then bench/out/peers/bin) and canopy."""

import os
import shutil
import subprocess

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO_DIR = os.path.dirname(BENCH_DIR)
PEERS_BIN = os.path.join(BENCH_DIR, "out", "peers", "bin")


def which(name):
    """The peer's path: bench/out/peers/bin first (current crates.io builds), then PATH; None if absent."""
    return shutil.which(name, path=PEERS_BIN + os.pathsep + os.environ.get("PATH", ""))


def version(path, flag="--version"):
    """The first line the program prints for its version flag."""
    try:
        done = subprocess.run([path, flag], capture_output=True, text=True, timeout=10)
    except OSError as error:
        return f"unknown ({error})"
    lines = (done.stdout or done.stderr).strip().splitlines()
    return " ".join(lines[0].split()) if lines else "unknown"


def canopy():
    """The canopy binary: $CANOPY, else target/release/canopy; None when it does not exist yet."""
    path = os.environ.get("CANOPY") or os.path.join(REPO_DIR, "target", "release", "canopy")
    return path if os.access(path, os.X_OK) else None


def has_subcommand(binary, name):
    """Whether `binary NAME --help` works (canopy's subcommands arrive one by one)."""
    done = subprocess.run([binary, name, "--help"], capture_output=True)
    return done.returncode == 0


# mpirun refuses to start as root without these; the benchmarks run as root here.
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
