"""The pass framework: the registry behind ``xlac opt``, errors that name the
pass, the fixed-point cap, per-pass timings."""
import pytest
from passtest import parse

import xlac
from xlac.cli import main
from xlac.passes.pipeline import PASSES, Pipeline, make_pass, run_passes

TEXT = """
HloModule m
ENTRY e {
  x = f32[4]{0} parameter(0)
  a = f32[4]{0} exponential(x)
  b = f32[4]{0} exponential(x)
  ROOT s = f32[4]{0} add(a, b)
}"""


def test_every_registered_pass_has_its_name():
    for name in PASSES:
        assert make_pass(name).name == name


def test_unknown_pass_names_the_known_ones():
    with pytest.raises(ValueError, match="unknown pass 'nope'.*cse"):
        make_pass("nope")


def test_run_passes_runs_in_order_and_times_each():
    module = parse(TEXT)
    pipeline = run_passes(module, "cse,dce")
    assert module.to_text().count("exponential") == 1
    assert set(pipeline.timings) == {"cse", "dce"} and all(t >= 0 for t in pipeline.timings.values())


class _Raises:
    name = "raises"

    def run(self, module):
        raise KeyError("boom")


class _Breaks:
    name = "breaks"

    def run(self, module):
        module.entry.root.shape = xlac.shape("s32[4]")   # the add now has the wrong type
        return True


def test_an_exception_in_a_pass_names_it():
    with pytest.raises(KeyError) as info:
        Pipeline("p", [make_pass("cse"), _Raises()]).run(parse(TEXT))
    assert "in pass 'raises' of pipeline 'p'" in "".join(getattr(info.value, "__notes__", []))


def test_a_verifier_failure_names_the_pass_that_broke_the_module():
    with pytest.raises(xlac.ShapeError, match="after pass 'breaks' of pipeline 'p'"):
        Pipeline("p", [_Breaks()], verify=True).run(parse(TEXT))


class _Forever:
    name = "forever"

    def run(self, module):
        return True


def test_a_fixed_point_that_is_not_reached_is_a_diagnostic():
    module = parse(TEXT)
    Pipeline("loop", [_Forever()], fixed_point=True, max_iterations=3).run(module)
    (d,) = module.diagnostics
    assert d.source == "pipeline" and "loop: no fixed point after 3 iterations" in d.message
    assert "forever" in d.message


def test_nested_pipeline_timings_reach_the_outer_one():
    outer = Pipeline("outer", [make_pass("simplify"), make_pass("fusion")])
    outer.run(parse(TEXT))
    assert {"cse", "dce", "algebraic-simplifier", "fusion"} <= set(outer.timings)


def test_compile_stats_report_pass_times():
    stats = xlac.jit(TEXT.replace("HloModule m", "HloModule pass_times")).compile_stats
    assert "fusion" in stats["passes_s"] and "cse" in stats["passes_s"]


def test_cli_opt(tmp_path, capsys):
    path = tmp_path / "m.hlo"
    path.write_text(TEXT, encoding="utf-8")
    assert main(["opt", str(path), "--passes", "cse,dce"]) == 0
    out = capsys.readouterr().out
    assert out.count("exponential") == 1 and xlac.parse_hlo(out).to_text() == out
    assert main(["opt", "--list-passes"]) == 0
    assert "multi-output-fusion" in capsys.readouterr().out.split()
    assert main(["opt", str(path), "--passes", "nope"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("xlac: error: unknown pass 'nope'") and "\n" not in err
