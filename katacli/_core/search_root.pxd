# cython: language_level=3
"""Contract: root policy (KataGo's root handling in search.cpp / searchhelpers).

Owns what applies only at the root of a search: the ending bonus per move (discouraging
pointless moves near the end, from the root's ownership), the board symmetries of the root
position and symmetry-duplicate moves, which moves are allowed at the root (useless-move and
symmetry pruning), dropping root children no longer legal or allowed (tree reuse, new
settings), the dynamic score centre set at the start of each search, and keeping the played
move's subtree when the root advances.
"""
from katacli._core.board cimport Loc
from katacli._core.search_nodes cimport TreeCore, Node

cdef double compute_ending_bonus(TreeCore* t, Loc move) noexcept nogil
cdef int root_board_symmetries(const TreeCore* t, int* out) noexcept nogil
cdef void mark_root_symmetry_duplicates(TreeCore* t, unsigned char* dup, int* syms, int num_syms) noexcept nogil
cdef void compute_root_allowed(TreeCore* t, unsigned char* sym_dup) noexcept nogil
cdef void filter_root_children(TreeCore* t) noexcept nogil
# All of the above for a new search on an evaluated root; syms gets the root's symmetries (room for 8);
# has_center: centre the score utility on `center` (a fresh root's plain evaluation), not the root's values.
cdef int begin_search_root(TreeCore* t, int* syms, bint has_center, double center) noexcept nogil
# Tree reuse after a move at the root: the move's expanded child detached (else NULL), the rest freed.
cdef Node* root_take_child_subtree(TreeCore* t, Loc move) noexcept nogil
