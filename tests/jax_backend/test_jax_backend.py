"""jax on xlac's PJRT plugin (xlac/pjrt, docs/jax_backend.md).

Each group of checks (tests/jax_backend/checks.py) runs in one subprocess
where jax starts with xlac's plugin; each test reports one check.  Skipped
where jax is not installed.
"""
import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("jax")

ROOT = Path(__file__).resolve().parents[2]
CHECKS = Path(__file__).with_name("checks.py")
ENV = {"mixed": {"JAX_PLATFORMS": "cpu,xlac"},
       "alone": {"JAX_PLATFORMS": "xlac", "XLAC_NUM_DEVICES": "2"},
       "multi": {"JAX_PLATFORMS": "cpu,xlac", "XLAC_NUM_DEVICES": "4",
                 "XLA_FLAGS": "--xla_force_host_platform_device_count=4"}}


@functools.lru_cache(maxsize=None)
def results(group: str) -> dict:
    env = dict(os.environ, **ENV[group])
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    done = subprocess.run([sys.executable, str(CHECKS), group], env=env, capture_output=True, encoding="utf-8",
                          timeout=600, stdin=subprocess.DEVNULL)
    found = {}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            found[r["check"]] = r
    found["_process"] = done
    return found


def run_check(group: str, name: str) -> None:
    found = results(group)
    done = found["_process"]
    assert name in found, (f"check {name} did not report (exit {done.returncode})\n"
                           f"stdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-5000:]}")
    assert found[name]["ok"], found[name]["detail"]


MIXED = ["devices_listed", "round_trips", "jit_matmul", "grad", "vmap", "scan", "cond", "random_and_integers",
         "donation", "token_results", "compiler_options", "unsupported_op_is_an_error", "host_callbacks", "buffer_callbacks", "dlpack_views",
         "bad_argument_is_an_error", "compiled_properties",
         "linalg", "sparse_matmul", "memory_kinds", "serialize_executable", "zero_copy_view", "many_results_released"]
ALONE = ["entry_point_and_default_backend", "cpu_lowerings_under_xlac_alone", "host_callbacks_under_xlac_alone",
         "second_device", "no_reference_cycles",
         "named_sharding_jit_on_two_devices"]
MULTI = ["devices_listed_n", "pmap_psum_all_gather", "pmap_out_axes_none_keeps_each_devices_value", "shard_map_psum",
         "async_collectives_and_their_text", "partitioned_program_text_shows_its_collectives",
         "sharded_jit_on_a_2d_mesh",
         "inspect_and_shard_alike_under_jit", "meshes_of_devices_in_other_orders",
         "unreduced_values", "unreduced_parts_as_xla_leaves_them",
         "sharded_training_loop_keeps_its_parameters_split", "a_program_with_no_results_on_several_devices",
         "a_result_split_unevenly_comes_back_whole",
         "host_callbacks_on_several_devices", "dead_device_is_an_error"]


@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", MIXED)
def test_on_xlac_and_cpu(name):
    run_check("mixed", name)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", ALONE)
def test_xlac_alone(name):
    run_check("alone", name)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", MULTI)
def test_on_several_devices(name):
    run_check("multi", name)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("group", sorted(ENV))
def test_process_exits_cleanly(group):
    """No crash at exit (jaxlib destroys its last objects during Python's final
    garbage collection) and nothing a callback could not report."""
    done = results(group)["_process"]
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stderr[-5000:]}"
    for bad in ("Fatal Python error", "Exception ignored", "Traceback"):
        assert bad not in done.stderr, done.stderr[-5000:]


def test_every_check_is_a_test():
    text = CHECKS.read_text(encoding="utf-8")
    for group, names in (("mixed", MIXED), ("alone", ALONE), ("multi", MULTI)):
        declared = [line.split("def ")[1].split("(")[0] for chunk in text.split(f'@check("{group}")')[1:]
                    for line in chunk.splitlines()[1:2]]
        assert sorted(declared) == sorted(names), (group, declared)
