import sys

from xlac.cli import utf8_stdout

from . import main

utf8_stdout()                  # reports are Markdown in UTF-8, whatever the locale
sys.exit(main())
