"""katacli: KataGo rebuilt as a Python toolkit with a Cython core.

The Python API (imported on first use, so ``import katacli`` stays light)::

    net = katacli.load_network("net.bin.gz")
    game = katacli.Game(9, rules="japanese").play("B", "E5")
    result = katacli.analyze(game, net, visits=200)
    print(result.best_move, result.winrate, result.score_lead)

See :mod:`katacli.api` and docs/python-api.md.
"""
import os as _os

# PyTorch's OpenMP worker threads otherwise spin while they wait for work, and beside other busy
# programs (a GUI, a browser, a second engine) that spinning takes the cores everyone needs: on a
# 2-core machine under load, `kata benchmark -t 2 -v 50` measured 6.8 visits/s spinning and 75.6 with
# passive waiting. OpenMP reads this once, when torch is first imported, which no katacli module does
# before this line runs; a value the user set wins.
_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from katacli.api import EXPORTS as _API_EXPORTS  # noqa: E402
from katacli.lazy import lazy_attributes  # noqa: E402

__version__ = "0.1.0"

# KataGo release whose protocols, formats and numbers this package reproduces.
KATAGO_COMPAT_VERSION = "1.17.2"

__all__ = sorted(_API_EXPORTS)

__getattr__ = lazy_attributes(__name__, _API_EXPORTS)


def __dir__() -> list[str]:
    """The lazy names too, for tab completion and help()."""
    return sorted(set(globals()) | set(_API_EXPORTS))
