# cython: language_level=3
"""Contract of area and pass-alive computation (KataGo's calculateArea family; NN features 18-19).

Pass-alive (Benson): for a player P, split the board into "regions", the maximal
connected sets of points that are empty or hold opponent stones (each region
contains at least one empty point). A region is *vital* to a P chain when every
empty point of the region (every point, if multi-stone suicide is legal, since
then the opponent's stones could also be filled in) is adjacent to that chain.
Repeatedly remove P chains with fewer than two vital regions, and drop the
vitality of every region touching a removed chain. The P chains left are
pass-alive. A region is P's pass-alive territory when it borders no removed
P chain and at most one of its points is not adjacent to a P stone.

Big territories (used for scoring-like features, not pass-alive):
  safe big territory   a region holding no opponent stones that borders only
                       pass-alive P chains, of any size;
  unsafe big territory a region holding no opponent stones bordered by P,
                       whatever P's chains' status; written only on points not
                       already claimed (see ordering below).
Black is computed before white; white's pass-alive/safe marks overwrite
black's unsafe marks, black's unsafe marks never overwrite anything black
already set, white's unsafe marks never overwrite black's marks. Nothing is
marked for a player with no stones on the board.

All outputs are Color arrays indexed by Loc with MAX_ARR_SIZE entries, fully
overwritten, holding C_EMPTY, C_BLACK or C_WHITE (C_EMPTY off the board).
The board is only read.
"""
from katacli._core.board cimport Board, Loc, Color

# Pass-alive stones and territory of both players, plus optionally:
#   non_pass_alive_stones  every other stone counts for its own colour;
#   safe_big_territories / unsafe_big_territories as described above.
cdef void area_calculate(
    const Board* b, Color* result, bint non_pass_alive_stones, bint safe_big_territories,
    bint unsafe_big_territories, bint multi_stone_suicide_legal) noexcept nogil

# Independent life (for seki-aware group tax). Starts from the area with safe and
# unsafe big territories and non-pass-alive stones. Each connected same-owner
# component of that area is discarded as "seki" if any of its points touches an
# unowned empty point (dame) or is an owner's stone in atari; every other
# component is kept in result and counted (+1 white, -1 black) into
# white_minus_black_independent_life_region_count[0].
# keep_territories then also copies owned points whose owner differs from their
# colour (territory and dead stones) from the starting area; keep_stones copies
# owned points holding the owner's own stones.
cdef void area_independent_life(
    const Board* b, Color* result, int* white_minus_black_independent_life_region_count,
    bint keep_territories, bint keep_stones, bint multi_stone_suicide_legal) noexcept nogil

# Would pla playing the empty point loc connect two distinct pla chains, at least
# one of them unowned in pass_alive_area (neither pass-alive nor inside the
# opponent's pass-alive territory)? pass_alive_area is an area_calculate result
# without non-pass-alive stones. False if loc is not empty or is already pla's
# in pass_alive_area.
cdef bint area_is_non_pass_alive_self_connection(
    const Board* b, Loc loc, Color pla, const Color* pass_alive_area) noexcept nogil
