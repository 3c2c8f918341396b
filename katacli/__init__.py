"""katacli: KataGo rebuilt as a Python toolkit with a Cython core."""

__version__ = "0.1.0"

# KataGo release whose protocols, formats and numbers this package reproduces.
KATAGO_COMPAT_VERSION = "1.17.2"
