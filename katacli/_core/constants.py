"""The core's numbers for Python code, defined once in the core (board.pxd) and exported here.

=================  ==================================================================
``EMPTY``          colour of an empty point (0)
``BLACK``          Black, a player (1)
``WHITE``          White, a player (2); the opponent of p is ``3 - p``
``PASS_LOC``       the Loc of a pass (1; 0 is no location)
``MAX_BOARD_LEN``  the largest board edge katacli (and KataGo by default) supports
``NUM_SYMMETRIES`` rotations and reflections of a square board
=================  ==================================================================
"""
from katacli._core.board import core_constants as _core_constants

_VALUES = _core_constants()
EMPTY: int = _VALUES["EMPTY"]
BLACK: int = _VALUES["BLACK"]
WHITE: int = _VALUES["WHITE"]
PASS_LOC: int = _VALUES["PASS_LOC"]
MAX_BOARD_LEN: int = _VALUES["MAX_BOARD_LEN"]
NUM_SYMMETRIES: int = _VALUES["NUM_SYMMETRIES"]
