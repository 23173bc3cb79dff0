"""Generates benchmark trees reproducibly: the same spec and seed give the same names, sizes, times and
symlinks, whatever the number of worker processes (each directory, or each chunk of a flat directory,
draws from its own generator seeded by its position)."""

import json
import math
import os
import random
import shutil
import stat
import subprocess
import sys
import time
from multiprocessing import Pool

import treespec

# Most files are small: log-normal sizes with a median of 1.2 KiB, capped at 256 KiB.
MEDIAN_SIZE = 1200
SIZE_SIGMA = 1.3
MAX_SIZE = 256 * 1024
SYMLINK_SHARE = 0.01  # one entry in a hundred is a symlink to a sibling file
EPOCH = 1_700_000_000  # modification times spread over the five years before this
SPREAD = 5 * 365 * 86400
CHUNK = 4096  # files per task in a flat directory
STEMS = ["data", "report", "main", "util", "index", "config", "test", "image", "log", "model", "core",
         "lib", "readme", "notes", "backup", "cache", "module", "chunk", "result", "sample"]
EXTENSIONS = [".c", ".h", ".py", ".rs", ".txt", ".json", ".log", ".dat", ".so", ".html", ".png", ".gz", ""]
GENERATOR_VERSION = 1

_content = b""


def _init_worker(seed):
    global _content
    _content = random.Random(f"{seed}/content").randbytes(MAX_SIZE)


def _fill(task):
    """Creates `count` entries numbered from `first` in `directory`; returns (files, symlinks, bytes)."""
    directory, key, first, count, empty = task
    rng = random.Random(key)
    dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    files = symlinks = total = 0
    previous = None
    try:
        for index in range(first, first + count):
            name = f"{rng.choice(STEMS)}_{index:07d}{rng.choice(EXTENSIONS)}"
            mtime = (EPOCH - rng.randrange(SPREAD)) * 1_000_000_000 + rng.randrange(1_000_000_000)
            if previous is not None and rng.random() < SYMLINK_SHARE:
                os.symlink(previous, name, dir_fd=dir_fd)
                os.utime(name, ns=(mtime, mtime), dir_fd=dir_fd, follow_symlinks=False)
                symlinks += 1
                continue
            size = 0 if empty else min(MAX_SIZE, int(rng.lognormvariate(math.log(MEDIAN_SIZE), SIZE_SIGMA)))
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644, dir_fd=dir_fd)
            try:
                if size:
                    os.write(fd, memoryview(_content)[:size])
                os.utime(fd, ns=(mtime, mtime))
            finally:
                os.close(fd)
            files += 1
            total += size
            previous = name
    finally:
        os.close(dir_fd)
    return files, symlinks, total


def _deep_dirs(root, fanout, depth):
    """All directories of a balanced tree, parents before children."""
    level = [root]
    dirs = [root]
    for _ in range(depth):
        level = [os.path.join(parent, f"n{i}") for parent in level for i in range(fanout)]
        dirs.extend(level)
    return dirs


def _layout(spec, dest, seed, empty):
    """Creates the directories; returns them (the root first) and the file-creation tasks."""
    os.mkdir(dest)
    if spec.kind == "wide":
        dirs = [dest] + [os.path.join(dest, f"d{i:05d}") for i in range(spec.dirs)]
    elif spec.kind == "deep":
        dirs = _deep_dirs(dest, spec.fanout, spec.depth)
    else:
        chunks = range(0, spec.files, CHUNK)
        return [dest], [(dest, f"{seed}/flat/{first}", first, min(CHUNK, spec.files - first), empty) for first in chunks]
    for d in dirs[1:]:
        os.mkdir(d)
    filled = dirs if spec.kind == "deep" else dirs[1:]
    return dirs, [(d, f"{seed}/{spec.kind}/{i}", 0, spec.files, empty) for i, d in enumerate(filled)]


def _date_dirs(dirs, seed):
    """Gives directories reproducible modification times, once nothing more is created in them."""
    rng = random.Random(f"{seed}/dir-times")
    for d in dirs:
        mtime = (EPOCH - rng.randrange(SPREAD)) * 1_000_000_000 + rng.randrange(1_000_000_000)
        os.utime(d, ns=(mtime, mtime))


def stamp_path(dest):
    return dest.rstrip("/") + ".tree.json"


def _wanted(spec, seed, empty):
    return {"spec": spec.name(), "seed": seed, "empty": empty, "generator": GENERATOR_VERSION}


def existing(dest, spec, seed=1, empty=False):
    """The stamp of a tree already generated at `dest` with these parameters, else None."""
    try:
        with open(stamp_path(dest)) as f:
            stamp = json.load(f)
    except (OSError, ValueError):
        return None
    wanted = _wanted(spec, seed, empty)
    if os.path.isdir(dest) and all(stamp.get(k) == v for k, v in wanted.items()):
        return stamp
    return None


def generate(spec, dest, seed=1, empty=False, workers=None, log=print):
    """Generates the tree `spec` at `dest` (removing what was there) and writes its stamp."""
    started = time.monotonic()
    if os.path.lexists(stamp_path(dest)):
        os.remove(stamp_path(dest))
    if os.path.lexists(dest):
        log(f"gen-tree: removing the old {dest}")
        shutil.rmtree(dest)
    os.makedirs(os.path.dirname(os.path.abspath(dest)), exist_ok=True)
    if spec.kind == "usr":
        log(f"gen-tree: copying {spec.origin} to {dest}")
        subprocess.run(["cp", "-a", "--", spec.origin, dest], check=True)
        counts = _count(dest)
    else:
        dirs, tasks = _layout(spec, dest, seed, empty)
        files = symlinks = total = 0
        with Pool(workers or os.cpu_count(), initializer=_init_worker, initargs=(seed,)) as pool:
            for f, s, b in pool.imap_unordered(_fill, tasks, chunksize=max(1, len(tasks) // 64)):
                files, symlinks, total = files + f, symlinks + s, total + b
        _date_dirs(dirs, seed)
        counts = {"dirs": len(dirs) - 1, "files": files, "symlinks": symlinks, "bytes": total}
    stamp = dict(_wanted(spec, seed, empty), **counts, seconds=round(time.monotonic() - started, 1))
    with open(stamp_path(dest), "w") as f:
        json.dump(stamp, f, indent=1)
    return stamp


def _count(root):
    """Counts what a copied tree holds (directories below the root, files, symlinks, file bytes)."""
    counts = {"dirs": 0, "files": 0, "symlinks": 0, "bytes": 0}
    for parent, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            st = os.lstat(os.path.join(parent, name))
            if stat.S_ISDIR(st.st_mode):
                counts["dirs"] += 1
            elif stat.S_ISLNK(st.st_mode):
                counts["symlinks"] += 1
            else:
                counts["files"] += 1
                counts["bytes"] += st.st_size
    return counts


def ensure(spec_text, log=lambda message: print(message, file=sys.stderr)):
    """The tree SPEC_TEXT names, at its default path: generated the first time, then reused. Returns
    (path, stamp)."""
    spec = treespec.parse(spec_text)
    dest = treespec.default_path(spec)
    stamp = existing(dest, spec)
    if stamp is None:
        log(f"generating {spec} (once; kept in {dest})")
        stamp = generate(spec, dest, log=log)
    return dest, stamp
