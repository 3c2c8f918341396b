# cython: language_level=3
"""Contract: leaf evaluation plumbing (KataGo's searchnnhelpers, plus rollouts).

Owns terminal scoring of a node from its history, a leaf's network inputs in the batch buffers
(features, legal mask, and the NN cache key: KataGo's NNInputs::getHash bit for bit, its Zobrist numbers,
mixers and constants, the situation and the input-setting flags without the recent moves, so transpositions
share an evaluation and both engines' direct-mapped caches fill the same slots), storing a
network evaluation into a node (its policy row, shared with the NN cache, eval, ownership) and the
human-SL policy per policy position, and rollout evaluation (uniform priors, values from random playouts).
"""
from katacli._core.board cimport Color
from katacli._core.history cimport History
from katacli._core.search_nodes cimport TreeCore, Node, DirectEval
from katacli._core.policy_rows cimport PolicyRows
from katacli._core.ladder cimport LadderCache

cdef void set_terminal_result(TreeCore* t, Node* n, const History* h) noexcept nogil
cdef void set_nogo_terminal(Node* n, Color winner) noexcept nogil
# A leaf's network inputs into batch slot `slot`: first draw_leaf_symmetry (on the search thread, in leaf
# order: it sets the slot's is_root and orientation), then fill_leaf_features, which reads only t's settings,
# the slot's marks and h, and writes only the slot's rows (ladder_cache: the calling thread's, or NULL).
cdef void draw_leaf_symmetry(TreeCore* t, int slot, bint is_root) noexcept nogil
cdef void fill_leaf_features(TreeCore* t, int slot, const History* h, LadderCache* ladder_cache) noexcept nogil
cdef void store_eval(TreeCore* t, Node* n, const DirectEval* ev, const float* policy, PolicyRows* policy_block,
                     const unsigned char* legal, const float* ownership, bint keep_ownership) noexcept nogil
cdef void store_human_priors(TreeCore* t, Node* n, const float* policy, float policy_pass) noexcept nogil
cdef void rollout_evaluate(TreeCore* t, Node* n, const History* h, bint want_ownership) noexcept nogil
