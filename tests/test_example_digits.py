"""examples/digits: train on scikit-learn's digits with xlac-compiled SGD steps,
then classify from C with the forward pass compiled ahead of time (a few
epochs here; the full run, 40 epochs, reaches about 97% test accuracy)."""
import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytest.importorskip("sklearn", reason="examples/digits needs scikit-learn (pip install 'xlac[examples]')")


def _digits():
    spec = importlib.util.spec_from_file_location("digits_example", REPO / "examples" / "digits" / "digits.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["digits_example"] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.timeout(600)
def test_digits_trains_and_classifies_from_c(tmp_path):
    digits = _digits()
    has_plot = importlib.util.find_spec("matplotlib") is not None
    has_cc = shutil.which("cc") is not None or shutil.which("gcc") is not None
    lines = []
    result = digits.run(epochs=4, out=str(tmp_path), c=has_cc, plot=has_plot, log=lines.append)
    losses = result["losses"]
    assert len(losses) == 4 and losses[-1] < 0.6 * losses[0]
    assert result["accuracy"] > 0.85, lines          # 4 epochs; the full run gets >= 0.95
    if has_plot:
        png = Path(result["plot"])
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if has_cc:
        assert result["c_agrees"] is True and result["c_accuracy"] == result["accuracy"]
        assert (tmp_path / "digits.h").is_file() and (tmp_path / "classify").is_file()
