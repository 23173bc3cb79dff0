"""Tree specifications: `wide:DIRSxFILES`, `deep:FANOUTxDEPTH[xFILES]`, `flat:N`, `usr[:PATH]`."""

import os
import re
from dataclasses import dataclass

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TREES_DIR = os.path.join(BENCH_DIR, "out", "trees")

KINDS = {
    "wide": "many directories of many files: wide:DIRSxFILES (default 1000x100)",
    "deep": "a balanced tree: deep:FANOUTxDEPTH[xFILES per directory] (default 5x7x2, 97,655 dirs)",
    "flat": "one directory of N files: flat:N (default 1000000)",
    "usr": "a copy of a real tree: usr or usr:/some/path (default /usr)",
}


@dataclass(frozen=True)
class TreeSpec:
    kind: str
    dirs: int = 0  # wide: directories
    files: int = 0  # wide: files per directory; deep: files per directory; flat: files
    fanout: int = 0  # deep
    depth: int = 0  # deep
    origin: str = ""  # usr: the tree copied

    def name(self):
        """The directory name the tree gets under bench/out/trees."""
        if self.kind == "wide":
            return f"wide-{self.dirs}x{self.files}"
        if self.kind == "deep":
            return f"deep-{self.fanout}x{self.depth}x{self.files}"
        if self.kind == "flat":
            return f"flat-{self.files}"
        if self.origin == "/usr":
            return "usr"
        return "usr-" + re.sub(r"[^A-Za-z0-9]+", "-", self.origin).strip("-")

    def __str__(self):
        return self.name()


def _numbers(text, count_min, count_max, spec):
    parts = text.split("x")
    if not count_min <= len(parts) <= count_max or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise ValueError(f"bad tree spec '{spec}'")
    return [int(p) for p in parts]


def parse(spec):
    """Parses a tree spec; raises ValueError with the accepted forms when it is not one."""
    kind, _, params = spec.partition(":")
    try:
        if kind == "wide":
            dirs, files = _numbers(params or "1000x100", 2, 2, spec)
            return TreeSpec("wide", dirs=dirs, files=files)
        if kind == "deep":
            numbers = _numbers(params or "5x7x2", 2, 3, spec)
            files = numbers[2] if len(numbers) == 3 else 2
            return TreeSpec("deep", fanout=numbers[0], depth=numbers[1], files=files)
        if kind == "flat":
            (files,) = _numbers(params or "1000000", 1, 1, spec)
            return TreeSpec("flat", files=files)
        if kind == "usr":
            return TreeSpec("usr", origin=os.path.abspath(params or "/usr"))
    except ValueError:
        pass
    forms = "\n  ".join(f"{k}: {v}" for k, v in KINDS.items())
    raise ValueError(f"bad tree spec '{spec}'; the forms are:\n  {forms}")


def default_path(spec, seed=1, empty=False):
    """Where a generated tree lives: bench/out/trees/NAME[-sSEED][-empty]."""
    name = spec.name()
    if spec.kind != "usr":
        if seed != 1:
            name += f"-s{seed}"
        if empty:
            name += "-empty"
    return os.path.join(TREES_DIR, name)
