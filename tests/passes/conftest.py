"""Pass tests: helpers in passtest.py, and FileCheck tests as ``.hlo`` files.

Every ``tests/passes/filecheck/*.hlo`` is a test: its ``// RUN:`` line is an
``xlac opt`` command (``%s`` stands for the file), run in this process, and
the file's own ``CHECK`` directives are matched against what it prints, as
LLVM's lit and xDSL's filecheck tests do::

    // RUN: xlac opt %s --passes=cse
    // CHECK: ROOT {{.*}} add(a, a)
    HloModule m
    ...

The printed module must also parse back to the same text.
"""
import contextlib
import io
import os
import shlex
import sys

import pytest

import xlac

# The pass tests share helpers in passtest.py (run_pass, filecheck, ...).
sys.path.insert(0, os.path.dirname(__file__))

from passtest import filecheck_file  # noqa: E402

FILECHECK_DIR = os.path.join(os.path.dirname(__file__), "filecheck")


def pytest_collect_file(parent, file_path):
    if file_path.suffix == ".hlo" and str(file_path.parent) == FILECHECK_DIR:
        return HloFileCheckFile.from_parent(parent, path=file_path)
    return None


class HloFileCheckFile(pytest.File):
    def collect(self):
        yield HloFileCheckItem.from_parent(self, name=self.path.stem)


class HloFileCheckItem(pytest.Item):
    def runtest(self):
        from xlac.cli import main
        text = self.path.read_text(encoding="utf-8")
        run = [line.split("RUN:", 1)[1].strip() for line in text.splitlines()
               if line.lstrip().startswith("// RUN:")]
        if len(run) != 1:
            raise AssertionError(f"{self.path.name}: needs exactly one '// RUN:' line")
        argv = [str(self.path) if a == "%s" else a for a in shlex.split(run[0])]
        if argv[:2] != ["xlac", "opt"]:
            raise AssertionError(f"{self.path.name}: the RUN line must be an 'xlac opt' command")
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv[1:])
        assert code == 0, f"xlac opt failed: {err.getvalue()}"
        printed = out.getvalue()
        module_text = "".join(line + "\n" for line in printed.splitlines() if not line.startswith("//"))
        assert xlac.parse_hlo(module_text).to_text() == module_text, "the output does not round-trip"
        filecheck_file(printed, str(self.path))

    def repr_failure(self, excinfo):
        return f"{self.path.name}: {excinfo.value}"

    def reportinfo(self):
        return self.path, 0, f"filecheck: {self.path.name}"
