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

cdef void set_terminal_result(TreeCore* t, Node* n, const History* h) noexcept nogil
cdef void set_nogo_terminal(Node* n, Color winner) noexcept nogil
cdef void fill_leaf_features(TreeCore* t, int slot, const History* h, bint is_root) noexcept nogil
cdef void store_eval(TreeCore* t, Node* n, const DirectEval* ev, const float* policy, PolicyRows* policy_block,
                     const unsigned char* legal, const float* ownership, bint keep_ownership) noexcept nogil
cdef void store_human_priors(TreeCore* t, Node* n, const float* policy, float policy_pass) noexcept nogil
cdef void rollout_evaluate(TreeCore* t, Node* n, const History* h, bint want_ownership) noexcept nogil
