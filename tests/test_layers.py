"""The layer contract of docs/architecture.md, checked by import-linter (its
contracts are in pyproject.toml): each layer imports only the layers below."""
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_layers_import_downwards_only():
    exe = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    proc = subprocess.run([exe, "--no-cache"], cwd=REPO, capture_output=True, encoding="utf-8", timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "0 broken" in proc.stdout
