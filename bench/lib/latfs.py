"""The latency-injecting mount (`canopy latfs`) for benchmarks: start over a tree, count the requests
each command makes, stop cleanly (and clear mounts left stale by a killed server)."""

import errno
import json
import os
import signal
import subprocess
import time

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MOUNTS_DIR = os.path.join(BENCH_DIR, "out", "mnt")


def is_mounted(path):
    path = os.path.realpath(path)
    with open("/proc/self/mountinfo") as f:
        return any(line.split(" ")[4] == path for line in f)


def clear_stale(path):
    """Unmounts a FUSE mount whose server died ("Transport endpoint is not connected")."""
    try:
        os.stat(path)
    except OSError as error:
        if error.errno not in (errno.ENOTCONN, errno.ECONNABORTED):
            return
    else:
        if not is_mounted(path):
            return
    subprocess.run(["fusermount3", "-u", "-z", path], check=False, capture_output=True)


class LatencyMount:
    """`with LatencyMount(canopy, tree, "500us") as mount:` serves `tree` at `mount.path`."""

    def __init__(self, canopy, source, delay, threads=None, name=None):
        self.canopy, self.source, self.delay, self.threads = canopy, source, delay, threads
        self.path = os.path.join(MOUNTS_DIR, name or os.path.basename(source.rstrip("/")))
        self.ready_file = self.path + ".ready"
        self.stats_file = self.path + ".stats.json"
        self.log_file = self.path + ".log"
        self.server = None
        self._sequence = 0

    def __enter__(self):
        os.makedirs(MOUNTS_DIR, exist_ok=True)
        clear_stale(self.path)
        os.makedirs(self.path, exist_ok=True)
        for leftover in (self.ready_file, self.stats_file):
            if os.path.exists(leftover):
                os.remove(leftover)
        argv = [self.canopy, "latfs", self.source, self.path, "--delay", self.delay,
                "--ready-file", self.ready_file, "--stats-file", self.stats_file]
        if self.threads:
            argv += ["--threads", str(self.threads)]
        with open(self.log_file, "w") as log:
            self.server = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        deadline = time.monotonic() + 30
        while not os.path.exists(self.ready_file):
            if self.server.poll() is not None or time.monotonic() > deadline:
                self.__exit__(None, None, None)
                with open(self.log_file) as log:
                    raise RuntimeError(f"canopy latfs did not mount {self.path}:\n{log.read()}")
            time.sleep(0.02)
        return self

    def snapshot(self):
        """The server's counters now (requests by kind, and the most in flight since the last snapshot)."""
        self.server.send_signal(signal.SIGUSR1)
        self._sequence += 1
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with open(self.stats_file) as f:
                    stats = json.load(f)
                if stats.get("sequence", 0) >= self._sequence:
                    return stats
            except (OSError, ValueError):
                pass
            time.sleep(0.01)
        raise RuntimeError("canopy latfs did not write its counters")

    def __exit__(self, *exc):
        if self.server and self.server.poll() is None:
            self.server.send_signal(signal.SIGTERM)
            try:
                self.server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait()
        if is_mounted(self.path):
            subprocess.run(["fusermount3", "-u", "-z", self.path], check=False)
        return False


class RequestCounter:
    """Observes one command run on a mount: requests it caused, and the most it had in flight."""

    def __init__(self, mount):
        self.mount = mount
        self.before = None

    def start(self):
        self.before = self.mount.snapshot()

    def stop(self):
        after = self.mount.snapshot()
        return {"requests": after["total"] - self.before["total"], "max_in_flight": after["window_max_in_flight"]}
