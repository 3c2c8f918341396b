"""``python -m katacli ...``: the ``kata`` command, for an environment whose scripts are not on PATH."""
from katacli.cli import main

main()
