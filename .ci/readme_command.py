"""Print the README's command marked ``<!-- doctest: ci NAME -->`` (the block after the marker).

.ci/run runs the README's own set-up and test commands, so what a new user types is what CI
runs; tests/test_docs.py runs every other block of the docs.
"""
import re
import sys
from pathlib import Path

name = sys.argv[1]
text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
m = re.search(rf"<!-- doctest: ci {re.escape(name)} -->\n```sh\n(.*?)\n```", text, re.S)
if not m:
    sys.exit(f"README.md has no block marked <!-- doctest: ci {name} -->")
print(m.group(1))
