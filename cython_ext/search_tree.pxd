# cython: language_level=3
"""Contract: the MCTS tree -- nodes as C structs, batched leaf collection, backup, all nogil.

Vocabulary (KataGo's):
  node          a position in the tree; next_pla is the player to move there.
  direct eval   the network's (or a rollout's) evaluation of the node itself.
  edge          a legal move of an expanded node with its prior; edges are sorted by
                raw prior, highest first, and get a child node only once explored.
  child slot    an explored edge: the child node and the edge's visit count.
  human priors  with a human-SL net (-human-model), its policy per edge; a playout may pick its
                move by them instead of the main priors (humanSL*ExploreProb*). A weightless
                pick does not count an edge visit, so the parent's value ignores that playout.
  stats         the node's running averages over its subtree (White's view): win-loss,
                no-result, score mean and mean square, lead, utility and utility square,
                the weight sum and visits. Recomputed from the children after each visit
                (KataGo's recomputeNodeStats), not accumulated.
  virtual loss  a mark on a child that a descent in flight passed through; selection
                treats it as a loss so that one batch's descents spread out.
  playout       one descent from the root that ends in a value backed up to the root.

A batch is collected by repeated descents from the root; each ends at a new leaf
(marked NODE_PENDING, its features written to the batch buffers), at a terminal
node (scored from the history and backed up at once), or, when it runs into a
leaf already pending, is abandoned (virtual losses undone). In rollout mode a new
leaf is evaluated by random playouts on the spot and backed up at once.

Terminal nodes: the game is over in the node's history (two passes, a NoGo
player without moves, a no-result cycle) and the node is not forced
non-terminal (passes from the root under conservativePass, friendly-pass
suppression): scored from the history's winner and final score.

Graph search (transpositions) is not implemented: every node has one parent.
"""
from libc.stdint cimport int64_t, int16_t, int32_t, uint64_t, uint16_t
from cython_ext.board cimport Board, Loc, Color, Hash128, MAX_ARR_SIZE, MAX_PLAY_SIZE
from cython_ext.history cimport History
from cython_ext.features cimport FeatureParams
from cython_ext.search_values cimport SearchConfig
from cython_ext.playout cimport Rng

cdef enum:
    NODE_UNEVALUATED = 0
    NODE_PENDING = 1
    NODE_EXPANDED = 2

cdef enum:
    MAX_EDGES = MAX_PLAY_SIZE + 1       # every point plus pass

# How a batch slot's leaf is to be used once evaluated.
cdef enum:
    LEAF_NEW = 0          # a fresh node: store the eval, add it as the node's first visit, back up
    LEAF_ROOT_REINIT = 1  # the root again with root settings: replace its eval, no visit

# Where a node stands for the human-SL exploration probabilities (SearchConfig.human_explore_*).
cdef enum:
    HUMAN_AT_ROOT = 0
    HUMAN_AT_ROOT_PLAYER = 1   # below the root, the root player to move
    HUMAN_AT_OPPONENT = 2      # below the root, the opponent to move

# Outcome of one descent.
cdef enum:
    DESCENT_LEAF = 0              # a new leaf is waiting for evaluation in the batch
    DESCENT_DONE = 1              # a value was backed up (terminal, rollout, or nothing to expand)
    DESCENT_DONE_UNCOUNTED = 2    # backed up but does not count toward playout limits
    DESCENT_BLOCKED = 3           # ran into a pending leaf; abandoned


cdef struct Node

cdef struct Edge:
    float prior        # raw network prior
    Loc move
    int16_t slot       # index into the node's children, -1 while unexplored

cdef struct ChildSlot:
    Node* node
    int64_t edge_visits
    Loc move
    int16_t edge

cdef struct NodeStats:
    int64_t visits
    double weight_sum
    double weight_sq_sum
    double win_loss
    double no_result
    double score_mean
    double score_mean_sq
    double lead
    double utility
    double utility_sq

cdef struct DirectEval:
    double win              # White's win / loss / no-result probabilities
    double loss
    double no_result
    double score_mean
    double score_mean_sq
    double lead
    double var_time_left    # -1 when the net has no such head
    double st_wl_error
    double st_score_error
    double weight           # KataGo's computeWeightFromNNOutput

cdef struct Node:
    Color next_pla
    unsigned char state
    bint force_non_terminal
    bint is_terminal
    int32_t virtual_losses
    int32_t age                 # search number of the last (re)evaluation (root recompute)
    NodeStats stats
    DirectEval eval             # valid once state == NODE_EXPANDED
    float* ownership            # White's ownership per board point, row-major, or NULL
    float* human_priors         # the human-SL net's policy per edge (aligned with edges), or NULL
    # Terminal result, White's view (valid when is_terminal)
    double term_win_loss
    double term_no_result
    double term_score
    double term_score_sq
    # Moves
    int num_edges
    int next_new_edge           # all edges before this one have children
    Edge* edges
    int num_children
    int children_capacity
    ChildSlot* children
    # Subtree value bias
    int svb_entry               # -1: none
    double svb_last_delta_sum
    double svb_last_weight


cdef struct SvbEntry:
    Hash128 key
    double delta_utility_sum
    double weight_sum
    int32_t refs


cdef struct LeafSlot:
    Node** path                 # root .. leaf
    int16_t* slots              # child slot taken at each step (len depth)
    unsigned char* counted      # whether that step counts an edge visit
    int depth                   # number of steps; path has depth + 1 nodes
    int capacity
    int kind
    bint stops_below_root       # a counted playout whose value stops at a weightless step


cdef struct TreeCore:
    SearchConfig cfg
    FeatureParams feature_params
    int x_size
    int y_size
    int area
    Node* root
    History root_hist
    bint has_root_hist
    int search_age
    Rng rng
    # Modes
    bint nogo                   # play NoGo instead of Go
    bint rollouts               # evaluate leaves by random playouts, not a network
    int rollouts_per_leaf
    bint keep_ownership         # store every node's ownership (analysis wants it)
    bint ignore_pre_root_history
    bint ignore_all_history
    double playout_doubling_advantage     # for the root player; sign flipped for the other
    Color playout_doubling_advantage_pla  # C_EMPTY: the player the search is for
    Color pla_search_is_for
    # Root settings for this search
    float* root_priors          # per root edge: noised / tempered priors; NULL = raw
    bint root_allowed[MAX_ARR_SIZE]
    double root_ending_bonus[MAX_ARR_SIZE]   # White's score bonus per root move
    Color root_safe_area[MAX_ARR_SIZE]
    uint16_t avoid_until[2][MAX_ARR_SIZE]    # [pla - 1][loc]: banned while depth < value
    bint has_avoid[2]
    double upper_bound_visits_left           # futile-visit pruning
    int64_t playouts_below_root              # counted playouts that stopped short of the root (weightless)
    # Batch in flight
    int max_batch
    int num_leaves
    LeafSlot* leaves
    float* spatial              # [max_batch][22][y][x]
    float* global_features      # [max_batch][19]
    unsigned char* legal        # [max_batch][area + 1]
    uint64_t* cache_keys        # [max_batch][2]
    unsigned char* leaf_is_root # [max_batch]
    unsigned char* leaf_white   # [max_batch]: White to move
    # Scratch
    double* scratch             # recompute buffers
    # Subtree value bias table
    SvbEntry* svb_entries
    int svb_count
    int svb_capacity
    int32_t* svb_index          # open addressing: entry index + 1, 0 empty
    int svb_index_size          # power of two


# ---- tree-wide operations used by the results module ------------------------------
cdef double node_direct_utility(const TreeCore* t, const Node* n) noexcept nogil
cdef double child_weight(const ChildSlot* s) noexcept nogil
cdef double root_prior(const TreeCore* t, const Node* n, int edge) noexcept nogil
cdef double fpu_value(const TreeCore* t, const Node* n, Color pla, bint is_root, double policy_mass_visited,
                      double* parent_utility, double* parent_weight_per_visit, double* stdev_factor) noexcept nogil
cdef double explore_scaling(const TreeCore* t, double total_child_weight, double stdev_factor) noexcept nogil
cdef double explore_selection_value(double scaling, double prior, double child_weight, double child_utility,
                                    Color pla) noexcept nogil
cdef double ending_bonus(const TreeCore* t, const Node* parent, Loc move) noexcept nogil
cdef double prune_noise_weight(const TreeCore* t, int num, double* weights, const double* self_utilities,
                               const double* priors, double total) noexcept nogil
cdef void downweight_bad_children(const TreeCore* t, int num, double current_total, double desired_total,
                                  double amount_to_subtract, double amount_to_prune, double* weights,
                                  const double* self_utilities, const int64_t* visits) noexcept nogil


cdef class SearchTree:
    cdef TreeCore t
    cdef object _spatial
    cdef object _global
    cdef object _legal
    cdef object _keys
    cdef object _is_root
    cdef object _white
    cdef public object _root_symmetries
    cdef Loc _loc(self, xy) except? -1
