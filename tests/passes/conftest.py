import os
import sys

# The pass tests share helpers in passtest.py (run_pass, filecheck, ...).
sys.path.insert(0, os.path.dirname(__file__))
