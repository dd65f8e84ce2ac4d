"""``python -m kinhec``: the command line."""

from kinhec.cli import main

main()
