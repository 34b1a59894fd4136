"""Helpers for pass tests: HLO text in, pass, HLO text out, checked with filecheck.

    out = run_pass(AlgebraicSimplifier(), '''
        HloModule m
        ENTRY e {
          p = f32[2,3]{1,0} parameter(0)
          ...
        }''')
    filecheck(out, '''
        CHECK: ROOT {{.*}} = f32[2,3]{1,0} add(
        CHECK-NOT: transpose
    ''')
"""
from __future__ import annotations

import copy
import io
import os
import tempfile
import textwrap

import numpy as np
from filecheck.matcher import Matcher
from filecheck.options import Options

import xlac
from xlac.hlo.verifier import verify
from xlac.passes.dce import DCE


def parse(text: str):
    module = xlac.parse_hlo(textwrap.dedent(text))
    verify(module)
    return module


def run_pass(p, hlo_text: str, *, dce: bool = False, expect_changed: bool | None = None) -> str:
    """Parse, verify, run the pass ``p`` (then DCE if asked), verify, print.

    Also checks that the printed result parses back to the same text and that
    the entry's parameter and result shapes (layouts included) did not change.
    """
    module = parse(hlo_text)
    before = module.entry_computation_layout
    changed = p.run(module)
    if dce:
        changed = DCE().run(module) or changed
    verify(module)
    if expect_changed is not None:
        assert bool(changed) == expect_changed, f"{p.name} changed={changed}:\n{module.to_text()}"
    assert module.entry_computation_layout == before, "entry signature changed"
    text = module.to_text()
    assert xlac.parse_hlo(text).to_text() == text
    return text


def filecheck(text: str, checks: str) -> None:
    """Match ``text`` against FileCheck directives (``CHECK:``, ``CHECK-NOT:``, ...)."""
    checks = textwrap.dedent(checks)
    with tempfile.TemporaryDirectory() as tmp:
        check_file = os.path.join(tmp, "checks.txt")
        with open(check_file, "w", encoding="utf-8") as fh:
            fh.write(checks)
        filecheck_file(text, check_file)


def filecheck_file(text: str, check_file: str) -> None:
    """Match ``text`` against the FileCheck directives in ``check_file``."""
    with tempfile.TemporaryDirectory() as tmp:
        input_file = os.path.join(tmp, "input.hlo")
        with open(input_file, "w", encoding="utf-8") as fh:
            fh.write(text)
        matcher = Matcher.from_opts(Options(match_filename=check_file, input_file=input_file))
        matcher.stderr = io.StringIO()
        rc = matcher.run()
    if rc != 0:
        with open(check_file, encoding="utf-8") as fh:
            checks = fh.read()
        raise AssertionError(f"filecheck failed:\n{matcher.stderr.getvalue()}\n--- input ---\n{text}"
                             f"\n--- checks ---\n{checks}")


def flatten(value) -> list:
    if isinstance(value, tuple):
        return [leaf for v in value for leaf in flatten(v)]
    return [np.asarray(value)]


def assert_same_values(got, want, signed_zeros: bool = True) -> None:
    """Equal values: -0.0 differs from +0.0 (unless ``signed_zeros=False``), any NaN
    equals any NaN, integers exactly."""
    got, want = flatten(got), flatten(want)
    assert len(got) == len(want)
    for k, (a, b) in enumerate(zip(got, want)):
        assert a.dtype == b.dtype and a.shape == b.shape, f"result {k}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
        if a.dtype.kind not in "biu":  # floats (bf16 included) and complex
            if a.dtype.kind != "c":
                a, b = a.astype(np.float64), b.astype(np.float64)
            same = (a == b) | (np.isnan(a) & np.isnan(b))
            if a.dtype.kind == "f" and signed_zeros:
                same &= (np.signbit(a) == np.signbit(b)) | np.isnan(a)  # a NaN's sign is not a value
            assert same.all(), f"result {k}:\n{a}\nvs\n{b}"
        else:
            np.testing.assert_array_equal(a, b, err_msg=f"result {k}")


def evaluate_before_after(pipeline, module, args):
    """Evaluate ``module`` and a copy run through ``pipeline``; returns (before, after, copy)."""
    after_module = copy.deepcopy(module)
    pipeline.run(after_module)
    verify(after_module)
    return xlac.evaluate(module, *args), xlac.evaluate(after_module, *args), after_module
