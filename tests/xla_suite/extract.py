"""The HLO modules in XLA's C++ tests: raw string literals that begin with ``HloModule``.

XLA's tests hold their modules as C++ raw strings (``R"(...)"``, ``R"hlo(...)hlo"``),
some with ``absl::StrFormat``/``StrReplaceAll`` placeholders (``%s``, ``$0``) that the
test fills in; those cannot be run as written, and XLA's parser refuses them as it
does any other text that is not a module (the suite then leaves them out).

Nothing here is XLA's: it reads a checkout of openxla/xla given by path.
"""
from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from pathlib import Path

# Where XLA keeps tests that run modules on the CPU (or on the evaluator): every .cc under
# these, plus any other test file that executes a module it parsed (those of the GPU back
# end included: XLA:CPU runs their modules too, unless they need a GPU's custom calls).
TEST_DIRS = ("xla/tests", "xla/service/cpu/tests", "xla/backends/cpu", "xla/hlo/evaluator")
EXECUTES = re.compile(r"\b(RunAndCompare\w*|ExecuteAndTransfer|ExecuteNoHloPasses|Execute\w*Replicated)\s*\(")
RAW_STRING = re.compile(r'R"([^()\\\s]{0,16})\(')


# What says a module runs on several devices: its header, the test around it (XLA's tests
# mostly set the replica count in code, not in the text), or the device ids its collectives name.
HEADER_DEVICES = re.compile(r"\b(?:replica_count|num_partitions)=(\d+)")
TEST_REPLICATED = re.compile(r"\b(ExecuteReplicated|kNumReplicas|kNumPartitions|replica_count\s*=\s*[2-9]|"
                             r"num_partitions\s*=\s*[2-9]|GetModuleConfigForTest\(\s*/\*replica_count=\*/\s*[2-9])")
NEXT_TEST = re.compile(r"^\s*(XLA_)?(TEST|TEST_F|TEST_P|TYPED_TEST)\(", re.M)
GROUP_LISTS = re.compile(r"\b(?:replica_groups|source_target_pairs)=\{((?:\{[\d,\s]*\},?\s*)*)\}")
IOTA_GROUPS = re.compile(r"\breplica_groups=\[[\d,]+\]<=\[([\d,]+)\]")


def devices_named(text: str) -> int:
    """How many devices ``text`` needs by what it writes: the header's counts and the ids
    its replica groups and source-target pairs name (at least 1)."""
    counts = [int(n) for n in HEADER_DEVICES.findall(text.lstrip().split("\n", 1)[0])]
    for groups in GROUP_LISTS.findall(text):
        counts += [int(i) + 1 for i in re.findall(r"\d+", groups)]
    for dims in IOTA_GROUPS.findall(text):
        counts.append(math.prod(int(d) for d in dims.split(",")))
    return max(counts or [1])


@dataclass(frozen=True)
class Case:
    """One module: where it is (file relative to the checkout, 1-based line), its text,
    and whether the test around it runs it on several devices."""
    source: str
    line: int
    text: str
    replicated: bool = False

    @property
    def multi_device(self) -> bool:
        return self.replicated or devices_named(self.text) > 1

    @property
    def key(self) -> str:
        """A name for the case that does not change when lines above it move: file and text hash."""
        return f"{self.source}:{hashlib.sha256(self.text.encode()).hexdigest()[:12]}"

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line}"


def raw_strings(source: str):
    """(line, contents, the rest of its test) of every C++ raw string literal in ``source``."""
    pos = 0
    while (m := RAW_STRING.search(source, pos)) is not None:
        close = ")" + m.group(1) + '"'
        end = source.find(close, m.end())
        if end < 0:
            return
        pos = end + len(close)
        following = NEXT_TEST.search(source, pos)
        yield source.count("\n", 0, m.start()) + 1, source[m.end():end], \
            source[pos:following.start() if following else len(source)]


def test_files(root: Path) -> list[Path]:
    """The .cc files whose modules the suite runs, sorted."""
    files = set()
    for d in TEST_DIRS:
        files.update((root / d).rglob("*.cc"))
    for p in (root / "xla").rglob("*_test.cc"):
        if EXECUTES.search(p.read_text(errors="replace")):
            files.add(p)
    return sorted(files)


def cases(root: str | Path) -> list[Case]:
    """Every module in the test files of the XLA checkout at ``root``, in file and line order;
    the same text twice in one file is one case."""
    root = Path(root)
    if not (root / "xla").is_dir():
        raise FileNotFoundError(f"{root}: not a checkout of openxla/xla (no xla/ directory)")
    found, seen = [], set()
    for path in test_files(root):
        rel = str(path.relative_to(root))
        for line, text, rest in raw_strings(path.read_text(errors="replace")):
            if not text.lstrip().startswith("HloModule"):
                continue
            case = Case(rel, line, text, TEST_REPLICATED.search(rest) is not None)
            if case.key not in seen:
                seen.add(case.key)
                found.append(case)
    return found
