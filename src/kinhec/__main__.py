"""``python -m kinhec`` and the ``kinhec`` command: the command line.

Without the command line's own packages (click, rich: a light install of the numeric core) it says which
to install in one line, exit status 2, instead of a traceback.
"""

from __future__ import annotations

import sys

from kinhec.util.optional import missing_dependency

try:
    from kinhec.cli import main as cli_main
except ImportError as exc:
    MISSING = missing_dependency(exc, "the kinhec command")
    if MISSING is None:
        raise
    cli_main = None
else:
    MISSING = None


def main() -> None:
    """Run the command line (the ``kinhec`` entry point)."""
    if cli_main is None:
        sys.stderr.write(f"kinhec: error: {MISSING}\n")
        sys.exit(2)
    cli_main(prog_name="kinhec")


if __name__ == "__main__":
    main()
