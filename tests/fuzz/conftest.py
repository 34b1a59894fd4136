import os
import sys

import pytest

# The fuzzers share helpers in fuzzconf.py (settings, inputs, comparisons), graphs.py,
# mutations.py and parser_check.py.
sys.path.insert(0, os.path.dirname(__file__))

from fuzzconf import LONG  # noqa: E402


def pytest_collection_modifyitems(config, items):
    """The long campaign runs for hours: no per-test timeout for the fuzzers then
    (pyproject's 300 s stays for everything else, and for the fuzzers in CI)."""
    if LONG:
        here = os.path.dirname(__file__)
        for item in items:
            if str(item.fspath).startswith(here):
                item.add_marker(pytest.mark.timeout(0))
