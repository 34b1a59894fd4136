"""Every code block of README.md and docs/*.md runs.

A fenced block tagged ``python``, ``sh``/``bash`` or ``c`` is code; untagged and
``text`` blocks are not (command synopses, diagrams, IR).  Each code block runs in
a fresh process in a directory of its own holding copies of ``examples/`` and
``runtime/`` (blocks may write there) and links to ``benchmarks/`` and ``tests/``:
python blocks as a script, sh blocks with ``bash -e``, with the test
interpreter's ``bin/`` first on ``PATH`` (``python``, ``xlac``, ``mpiexec``).  A
block is self-contained: it imports what it uses.

An HTML comment on the line before a block directs it (invisible on the page):

* ``<!-- doctest: file NAME -->``: the block is a file the doc's other blocks use
  (a C program, a host file); it is written as ``NAME`` beside every block of the
  document instead of being run (the block that compiles or reads it tests it).
* ``<!-- doctest: ci NAME -->``: the README's set-up and test commands, which
  ``.ci/run`` itself runs (``.ci/readme_command.py NAME`` prints them).
* ``<!-- doctest: skip REASON -->``: not run, for REASON (a run of many minutes
  whose quick form is run; an install into a new environment).

Blocks that need what the project does not install (jax, a C compiler, ``make``)
are skipped with a reason when it is missing, and run where it is present.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CODE = {"python": "python", "py": "python", "sh": "sh", "bash": "sh", "c": "c"}
TIMEOUT_S = 240
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>```+|~~~+)(?P<info>.*)$")
DIRECTIVE = re.compile(r"^\s*<!--\s*doctest:\s*(?P<verb>file|skip|ci)\b\s*(?P<arg>.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    doc: Path
    line: int            # 1-based line of the opening fence
    lang: str            # python | sh | c
    text: str
    file: str | None = None
    skip: str | None = None

    @property
    def id(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def blocks(doc: Path) -> list:
    """The code blocks of ``doc`` in order, with their directives."""
    lines = doc.read_text(encoding="utf-8").splitlines()
    found, k = [], 0
    while k < len(lines):
        m = FENCE.match(lines[k])
        if not m:
            k += 1
            continue
        end = next((j for j in range(k + 1, len(lines))
                    if lines[j].strip().startswith(m["fence"]) and not lines[j].strip()[len(m["fence"]):].strip()),
                   None)
        assert end is not None, f"{doc.relative_to(ROOT)}:{k + 1}: unclosed code block"
        lang = CODE.get(m["info"].strip().split(" ")[0].lower()) if m["info"].strip() else None
        if lang:
            body = "\n".join(line[len(m["indent"]):] for line in lines[k + 1:end]) + "\n"
            d = DIRECTIVE.match(lines[k - 1]) if k else None
            found.append(Block(doc, k + 1, lang, body,
                               file=d["arg"] if d and d["verb"] == "file" else None,
                               skip=_skip_reason(d)))
        k = end + 1
    return found


def _skip_reason(d) -> str | None:
    if d and d["verb"] == "ci":
        return f".ci/run runs this command itself (the README's '{d['arg']}' command)"
    if d and d["verb"] == "skip":
        return d["arg"] or "marked skip"
    return None


def _without_duplicates(found: list) -> list:
    """``found`` with a block that repeats an earlier one's code (its ``#``
    comments aside) skipped: the same command runs once."""
    seen: dict = {}
    out = []
    for b in found:
        key = (b.lang, re.sub(r"\s+#[^\n]*", "", b.text).strip())
        if b.skip is None and b.file is None and key in seen:
            b = dataclasses.replace(b, skip=f"the same code as {seen[key]}, which runs")
        seen.setdefault(key, b.id)
        out.append(b)
    return out


ALL = _without_duplicates([b for doc in DOCS for b in blocks(doc)])


def _missing(block: Block) -> str | None:
    """What ``block`` needs and this machine lacks, or None."""
    text = block.text
    for module in re.findall(r"^\s*(?:import|from)\s+(jax|flax|optax|equinox|tensorflow|sklearn|matplotlib)\b",
                             text, re.M) if block.lang == "python" else ():
        if importlib.util.find_spec(module) is None:
            return f"needs {module}"
    needs_cc = block.lang == "c" or re.search(r"(^|[\s;&|(])(cc|gcc|clang|mpicc)\s", text) \
        or re.search(r"(^|[\s;&|(])make\s", text)
    if needs_cc and not (shutil.which("cc") or shutil.which("gcc")):
        return "needs a C compiler (cc)"
    if re.search(r"(^|[\s;&|(])mpiexec\s", text) and not shutil.which("mpiexec", path=_env()["PATH"]):
        return "needs mpiexec (pip install 'xlac[mpi]')"
    if re.search(r"(^|[\s;&|(])make\s", text) and not shutil.which("make"):
        return "needs make"
    if re.search(r"-llapack|-lopenblas", text) and not Path("/usr/lib/x86_64-linux-gnu/liblapack.so").exists():
        return "needs LAPACK (liblapack-dev)"
    return None


def _workdir(tmp_path: Path, block: Block) -> Path:
    for name in ("examples", "runtime"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("*.o", "__pycache__"))
    for name in ("benchmarks", "tests", "xlac", "pyproject.toml", "README.md", "docs"):
        (tmp_path / name).symlink_to(ROOT / name)
    for other in blocks(block.doc):
        if other.file:
            (tmp_path / other.file).write_text(other.text, encoding="utf-8")
    return tmp_path


def _env() -> dict:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["MPLBACKEND"] = "Agg"
    return env


def _command(block: Block, cwd: Path) -> list:
    if block.lang == "python":
        (cwd / "block.py").write_text(block.text, encoding="utf-8")
        return [sys.executable, "block.py"]
    if block.lang == "sh":
        return ["bash", "-e", "-o", "pipefail", "-c", block.text]
    # A C block by itself: it must compile.
    (cwd / "block.c").write_text(block.text, encoding="utf-8")
    return ["cc", "-std=c99", "-Wall", "-Werror", "-fsyntax-only", "-Iruntime", "-I.", "block.c"]


def test_docs_have_code_blocks():
    assert len(ALL) >= 20, [b.id for b in ALL]


@pytest.mark.timeout(TIMEOUT_S + 30)
@pytest.mark.parametrize("block", ALL, ids=lambda b: b.id)
def test_code_block_runs(block, tmp_path):
    if block.skip:
        pytest.skip(block.skip)
    why = _missing(block)
    if why:
        pytest.skip(why)
    if block.file:
        return                      # a file the document's other blocks use (and compile)
    assert not re.search(r"\bpip install\b", block.text), \
        f"{block.id}: a block that installs would change the test environment: mark it skip"
    cwd = _workdir(tmp_path, block)
    done = subprocess.run(_command(block, cwd), cwd=cwd, env=_env(), capture_output=True, encoding="utf-8",
                          timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, (f"{block.id}: exit {done.returncode}\n--- block\n{block.text}"
                                  f"--- stdout\n{done.stdout[-4000:]}--- stderr\n{done.stderr[-4000:]}")
