# cython: language_level=3
"""Contract: anti-mirror play -- countering an opponent who answers every move with its point mirrored
through the centre (KataGo's antiMirror, searchmirror.cpp).

At the start of each search (antiMirror on), mirror_update reads the game: the opponent of the player
to move counts as mirroring when at least 7 + half of its moves, and an exponentially weighted 0.45 of
its recent ones (decay 0.75), mirrored the move before, the last one included. It then also records
the mirroring player's advantage if the mirror held to the end (komi against the extra point of the
last move on odd boards under area scoring and the handicap compensation) and how far the 7x7 centre
is from symmetric. A change of that status clears the tree (search_tree / the Searcher).

While a descent's moves below the root still mirror each other (mirroring_since_root), selection
(search_select) raises the prior of the opponent's mirror move and of our central moves
(anti_mirror_policy) and forces playouts down the mirror move and towards the centre
(anti_mirror_forced_explore); a leaf where the mirroring player holds the centre and the komi favours
it gets its win/loss shifted by the network's ownership of the centre (mirror_hack_eval). While the
opponent is mirroring, value weighting of children is off (search_backup), and neither the subtree
value bias table nor the eval cache is used.
"""
from katacli._core.board cimport Loc, Color
from katacli._core.history cimport History
from katacli._core.search_nodes cimport TreeCore, Node, DirectEval

# Recompute the mirroring status from the root history; True when mirroring_pla changed.
cdef bint mirror_update(TreeCore* t) noexcept nogil
# Whether every move of the mirroring side after the root in h mirrored the move before it (ignoring
# the last skip_recent moves).
cdef bint mirroring_since_root(const TreeCore* t, const History* h, int skip_recent) noexcept nogil
# Whether selection at a node with history h applies the anti-mirror adjustments.
cdef bint anti_mirror_active(const TreeCore* t, const History* h) noexcept nogil
# The opponent's mirror answer at node n (pass when that point is illegal), or NULL_LOC when there is none.
cdef Loc anti_mirror_target(const TreeCore* t, const Node* n, const History* h) noexcept nogil
cdef double anti_mirror_policy(const TreeCore* t, double prior, Loc move, Color move_pla, Loc target,
                               const History* h) noexcept nogil
cdef double anti_mirror_forced_explore(const TreeCore* t, double child_utility, double parent_utility, Loc move,
                                       Color move_pla, Loc target, double child_weight, double total_child_weight,
                                       const History* h, bint is_root) noexcept nogil
# A leaf whose evaluation gets the centre-ownership shift (needs the network's ownership).
cdef bint mirror_eval_difficult(const TreeCore* t, const History* h) noexcept nogil
cdef void mirror_hack_eval(const TreeCore* t, DirectEval* ev, double white_center_ownership) noexcept nogil
