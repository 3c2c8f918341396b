# cython: language_level=3
"""Contract: MCTS tree storage -- the C structs every search_* module works on, node and
subtree-value-bias-table storage, and the tiny per-child values that selection, backup and
results all need (inline here so the hot loops pay no cross-module call).

The search is split by phase, as KataGo splits search*.cpp:
  search_nodes    this file: structs, node allocation/edges/children, the SVB table
  policy_rows     the policy rows a node shares with the NN cache (reference counted)
  search_graph    graph search: graph hashes, the node table, mark-and-sweep, whole-graph walks
  search_evalcache the eval cache: search results remembered across searches (useEvalCache)
  search_mirror   anti-mirror play: detecting a mirroring opponent, selection and eval adjustments
  search_select   selection: FPU, exploration scaling, select_child (incl. human-SL picks)
  search_backup   backup: leaf values, recompute_stats, downweighting, noise pruning
  search_leaf     leaf evaluation plumbing: terminal scores, features + cache keys,
                  store_eval / store_human_priors, rollouts
  search_root     root policy: ending bonus, symmetry, allowed moves, root child filtering
  search_descent  descents and batch collection (expansion of new children)
  search_tree     the SearchTree Python class, a thin wrapper over the above
  search_results  reading results out of a SearchTree (PV, analysis info, move choice)
  search_diagnostics  evalsgf's views of a finished search (graph edges, sharp score, ...)
  search_patterns pattern avoidance: local pattern hashes and the bonus table (avoid*Pattern*)

The search as a whole: nodes as C structs, batched leaf collection, backup, all nogil.

Vocabulary (KataGo's):
  node          a position in the tree; next_pla is the player to move there.
  direct eval   the network's (or a rollout's) evaluation of the node itself.
  edge          a legal move of an expanded node with its prior. An edge is named by its policy
                position (board points row-major, then pass: TreeCore.edge_loc / loc_edge), and
                its prior is read from the node's policy row, which the node shares with the NN
                cache (policy_rows) instead of copying. "Prior order" is raw prior, highest first,
                ties in position order (pass last), as KataGo scans its policy.
  child slot    an explored edge: the child node and the edge's visit count; made only once the
                edge is explored (a bit per position in Node.explored says which are).
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

Graph search (useGraphSearch, KataGo's default): positions reached by different move orders
share one node. Every node but the root lives in the tree's node table (search_graph), keyed by a
graph hash of the position bound with its recent history (graphSearchRepBound); a node may then
have several parents, each counting its own edge visits, and a descent may meet a cycle. Walks
over the whole graph visit each node once (walk marks); freeing is mark-and-sweep from the root.
With useGraphSearch off every node has one parent and the node table stays empty.
"""
from libc.stdint cimport int64_t, int16_t, int32_t, uint64_t, uint16_t
from katacli._core.board cimport Loc, Color, Hash128, MAX_ARR_SIZE, MAX_PLAY_SIZE, NULL_LOC, C_EMPTY
from katacli._core.history cimport History
from katacli._core.features cimport FeatureParams
from katacli._core.ladder cimport LadderCache
from katacli._core.search_values cimport SearchConfig, result_utility, score_utility, eval_weight
from katacli._core.playout cimport Rng, rng_next
from katacli._core.search_evalcache cimport EvalCacheEntry, EvalCacheTable
from katacli._core.search_patterns cimport PatternTable, pattern_table_get
from katacli._core.policy_rows cimport PolicyRows

cdef enum:
    NODE_UNEVALUATED = 0
    NODE_PENDING = 1
    NODE_EXPANDED = 2

cdef enum:
    MAX_EDGES = MAX_PLAY_SIZE + 1       # every point plus pass
    # 64 edges a word, rounded up; a shift because Cython turns // into a function call, which a C
    # enum in a module that cimports this contract cannot use.
    EXPLORED_WORDS = (MAX_EDGES + 63) >> 6
    NEXT_NEW_UNKNOWN = -2               # Node.next_new_edge: to be found again

# How a batch slot's leaf is to be used once evaluated.
cdef enum:
    LEAF_NEW = 0          # a fresh node: store the eval, add it as the node's first visit, back up
    LEAF_ROOT_REINIT = 1  # the root again with root settings: replace its eval, no visit
    LEAF_REINIT = 2       # graph search: a shared node whose chosen move is illegal on this path
                          # (superko, encore): replace its eval from this history, count the edge visit

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

cdef struct ChildSlot:
    Node* node
    int64_t edge_visits
    Loc move
    int16_t edge            # the move's policy position, -1 once it has no edge (re-evaluated as illegal)
    # The edge's raw prior, parent.policy[edge], kept here whenever the edge or the row changes: selection and
    # backup read every child's prior, and from the policy row (1.4 KB on 19x19) each was a cache miss.
    float prior

cdef struct NodeStats:
    # The fields a parent's selection reads for every child first (see Node's layout).
    int64_t visits
    double weight_sum
    double utility
    double weight_sq_sum
    double win_loss
    double no_result
    double score_mean
    double score_mean_sq
    double lead
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

# Node layout: a descent is bound by cache misses, so the fields are grouped by who reads them. A parent's
# selection reads, for every child, its virtual losses, visits, weight and utility (all in the first 48 bytes);
# selection at a node reads its own children, edge and policy fields (the next 96); the rest is read at
# evaluation, backup or by walks. Grouped so, a 25,600-visit 19x19 search with a free network ran 1.16-1.34x
# faster (with the priors kept in the child slots). Allocating nodes on 64-byte lines on top of that lost
# (glibc's aligned allocations cost more than the line splits they saved).
cdef struct Node:
    # what the parent's selection reads of each child
    Color next_pla
    unsigned char state
    unsigned char force_non_terminal
    unsigned char is_terminal
    int32_t virtual_losses
    int32_t age                 # search number of the last (re)evaluation (root recompute)
    int svb_entry               # subtree value bias entry, -1: none
    NodeStats stats
    # selection at this node
    ChildSlot* children
    int num_children
    int children_capacity
    int16_t num_edges
    int16_t next_new_edge       # the first edge in prior order without a child, -1 none, NEXT_NEW_UNKNOWN
    float next_new_prior        # its prior, valid with it (selection then reads no policy row: a cache miss)
    float* human_priors         # the human-SL net's policy per policy position (num_positions), or NULL
    # Moves: the edges are the policy positions whose prior is >= 0
    const float* policy         # priors per policy position (t.num_positions), -1: no edge; NULL unevaluated
    # Eval cache (search_evalcache): the entry for this position when the node was made, or NULL
    EvalCacheEntry* eval_cache_entry
    uint64_t explored[EXPLORED_WORDS]   # bit per policy position: that edge has a child slot
    # the rest
    DirectEval eval             # valid once state == NODE_EXPANDED
    float* ownership            # White's ownership per board point, row-major, or NULL
    PolicyRows* policy_rows     # the block holding policy (shared with the NN cache), released with the node
    # Terminal result, White's view (valid when is_terminal)
    double term_win_loss
    double term_no_result
    double term_score
    double term_score_sq
    # Subtree value bias
    double svb_last_delta_sum
    double svb_last_weight
    # Graph search
    Hash128 graph_hash          # the position bound with its recent history (search_graph)
    int64_t walk_mark           # == TreeCore.walk_epoch: already seen by the current whole-graph walk
    int64_t path_mark           # == TreeCore.descent_epoch: on the current descent's path (cycle check)
    int32_t on_path             # on the path of a recursive walk in progress (cycle check)
    # Batch backup (search_backup.backup_batch): 1 + the last leaf of the batch being stored whose counted
    # path runs through this node (0: none), and the playouts those leaves add to it
    int16_t batch_last_plus_one
    int16_t batch_visits
    # Pattern avoidance (search_patterns): the pattern of the move that made this node (zero: none)
    Hash128 pattern_hash


cdef struct NodeTableEntry:
    Hash128 key                 # graph hash (xor a marker for forced non-terminal nodes)
    Node* node                  # NULL: empty slot


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
    LadderCache ladder_cache    # laddered stones of positions this tree's leaves scanned (features)
    int x_size
    int y_size
    int area
    int num_positions           # area + 1: the policy positions (pass last)
    Loc edge_loc[MAX_EDGES]     # policy position -> move
    int16_t loc_edge[MAX_ARR_SIZE]   # move -> policy position (-1 off the board)
    Node* root
    History root_hist
    bint has_root_hist
    uint64_t root_version       # +1 whenever root_hist changes (leaf_workers' slot copies follow it)
    int search_age
    Rng rng
    # Modes
    bint nogo                   # play NoGo instead of Go
    bint rollouts               # evaluate leaves by random playouts, not a network
    int rollouts_per_leaf
    bint keep_ownership         # store every node's ownership (analysis wants it)
    bint leaf_by_leaf_backup    # refresh a batch's paths after every leaf (backup) instead of once (backup_batch)
    bint ignore_pre_root_history
    bint ignore_all_history
    double playout_doubling_advantage     # for the root player; sign flipped for the other
    Color playout_doubling_advantage_pla  # C_EMPTY: the player the search is for
    Color pla_search_is_for
    # Root settings for this search
    float* root_priors          # per policy position of the root: noised / tempered priors; NULL = raw
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
    # Graph search (search_graph)
    bint graph_search           # useGraphSearch
    int graph_rep_bound         # graphSearchRepBound
    double graph_catch_up_leak_prob
    Hash128 root_graph_hash     # graph hash of the root position
    NodeTableEntry* node_table  # open addressing on key.h0, every node but the root
    int64_t node_table_size     # power of two (0: none yet)
    int64_t node_table_count
    int64_t walk_epoch
    int64_t descent_epoch
    # Eval cache (useEvalCache; search_evalcache): NULL when off. Keys are graph hashes xor a hash of
    # every search parameter, so that results searched with other settings are not reused.
    EvalCacheTable* eval_cache
    Hash128 eval_cache_params_hash
    int64_t eval_cache_min_visits
    # Anti-mirror (antiMirror; search_mirror), updated at the start of each search
    bint anti_mirror
    Color mirroring_pla         # C_EMPTY: the opponent is not mirroring (always, with antiMirror off)
    double mirror_advantage     # points the mirroring side wins by if the mirror holds to the end
    double mirror_center_symmetry_error
    unsigned char* leaf_mirror_hack   # [max_batch]: the leaf's eval gets the centre-ownership shift
    # Leaf symmetries drawn by the tree (SearchTree.set_leaf_symmetries): a non-root leaf's features are
    # filled already in a random one of the 8 orientations, so the evaluator gathers nothing. NULL: off.
    const int* sym_pos_maps           # [8][area]: where point p's features go under each symmetry
    signed char* leaf_symmetry        # [max_batch]: the orientation a leaf's features are in, -1 canonical
    Rng sym_rng
    # Pattern avoidance (search_patterns): this search's bonus table, NULL when off. Owned by the
    # SearchTree's Python PatternBonusTable object; set between searches only.
    const PatternTable* pattern_table


# ---- storage (search_nodes.pyx) -----------------------------------------------------------------
cdef void tree_init_positions(TreeCore* t) noexcept nogil      # edge_loc / loc_edge for t's board size
cdef Node* node_new(Color next_pla) noexcept nogil
cdef void node_free_one(TreeCore* t, Node* n) noexcept nogil           # this node only, releasing its SVB ref
cdef void node_free_tree(TreeCore* t, Node* n) noexcept nogil          # the whole subtree (tree search only)
cdef int node_add_child(const TreeCore* t, Node* n, int edge, Node* child) noexcept nogil  # returns the child slot
# The node's policy row (t.num_positions priors, -1 where there is no edge) held in owner (retained here),
# keeping existing children attached to their moves.
cdef void node_set_policy(const TreeCore* t, Node* n, const float* row, PolicyRows* owner) noexcept nogil
cdef void node_drop_edgeless_children(Node* n) noexcept nogil   # children whose move lost its edge
cdef void node_mark_children(const TreeCore* t, Node* n) noexcept nogil   # explored bits + child edges, again
cdef int node_edges_in_prior_order(const TreeCore* t, const Node* n, int16_t* out) noexcept nogil  # count
# The first unexplored edge, or -1; its prior is n.next_new_prior then.
cdef int node_next_new_edge(const TreeCore* t, Node* n) noexcept nogil
# Eval cache: look up n's entry (graph search with the eval cache on; n.graph_hash must be set).
cdef void node_attach_eval_cache(TreeCore* t, Node* n) noexcept nogil

# Subtree value bias table: entries keyed by a move's local situation, shared by every node with that key.
cdef Hash128 svb_move_key(const History* h, Loc prev_move, Loc move, Color pla) noexcept nogil  # h: after move
cdef int svb_get(TreeCore* t, Hash128 key) noexcept nogil       # entry index, adding a reference
cdef void svb_release(TreeCore* t, Node* n) noexcept nogil
cdef void svb_reset(TreeCore* t) noexcept nogil
cdef void svb_clear_unused(TreeCore* t) noexcept nogil
cdef double svb_bias(const TreeCore* t, const Node* n) noexcept nogil   # utility bias from n's entry


# ---- tiny hot values, inline for selection, backup and results --------------------------------------
cdef inline Hash128 rand_hash(Rng* r) noexcept nogil:
    cdef Hash128 h
    h.h0 = rng_next(r)
    h.h1 = rng_next(r)
    return h


cdef inline bint eval_cache_applies(const TreeCore* t, const Node* n) noexcept nogil:
    # KataGo: only with graph search, not against a mirroring opponent, and never on a forced non-terminal
    # node (the root after the game ended).
    return (n.eval_cache_entry != NULL and t.eval_cache != NULL and t.graph_search and not n.force_non_terminal
            and t.mirroring_pla == C_EMPTY)


cdef inline Hash128 eval_cache_key(const TreeCore* t, Hash128 graph_hash) noexcept nogil:
    cdef Hash128 k
    k.h0 = graph_hash.h0 ^ t.eval_cache_params_hash.h0
    k.h1 = graph_hash.h1 ^ t.eval_cache_params_hash.h1
    return k


cdef inline double node_direct_utility(const TreeCore* t, const Node* n) noexcept nogil:
    return (result_utility(&t.cfg, n.eval.win - n.eval.loss, n.eval.no_result)
            + score_utility(&t.cfg, n.eval.score_mean, n.eval.score_mean_sq))


cdef inline double direct_weight(const TreeCore* t, const Node* n) noexcept nogil:
    # Recomputed on use, as KataGo does: it depends on the current dynamic score centre.
    return eval_weight(&t.cfg, n.eval.score_mean, n.eval.st_wl_error, n.eval.st_score_error)


cdef inline double child_weight(const ChildSlot* s) noexcept nogil:
    cdef int64_t v = s.node.stats.visits
    return s.node.stats.weight_sum * (<double>s.edge_visits / <double>(v if v > 1 else 1))


cdef inline double child_weight_sq(const ChildSlot* s) noexcept nogil:
    cdef int64_t v = s.node.stats.visits
    return s.node.stats.weight_sq_sum * (<double>s.edge_visits / <double>(v if v > 1 else 1))


cdef inline double pattern_bonus(const TreeCore* t, const Node* n) noexcept nogil:
    # White's utility bonus for the move that led to n, only for moves of the player the search is
    # for (KataGo's getPatternBonus): the search steers that player away from remembered shapes.
    if t.pattern_table == NULL or n.next_pla == t.pla_search_is_for:
        return 0.0
    return pattern_table_get(t.pattern_table, n.pattern_hash)


cdef inline bint edge_exists(const Node* n, int edge) noexcept nogil:
    return n.policy != NULL and edge >= 0 and n.policy[edge] >= 0.0


cdef inline bint edge_explored(const Node* n, int edge) noexcept nogil:
    return (n.explored[edge >> 6] >> (edge & 63)) & 1


cdef inline int edge_of_move(const TreeCore* t, const Node* n, Loc move) noexcept nogil:
    # The move's edge at n, or -1 when n has none for it.
    cdef int e = t.loc_edge[move]
    return e if edge_exists(n, e) else -1


cdef inline bint edge_before(const Node* n, int a, int b) noexcept nogil:
    # Whether edge a comes before edge b in prior order.
    return n.policy[a] > n.policy[b] or (n.policy[a] == n.policy[b] and a < b)


cdef inline double root_prior(const TreeCore* t, const Node* n, int edge) noexcept nogil:
    # The edge's prior for selection: the root's noised / tempered priors when set, else the raw one.
    if n == t.root and t.root_priors != NULL:
        return t.root_priors[edge]
    return n.policy[edge]


cdef inline double child_prior(const TreeCore* t, const Node* n, const ChildSlot* s) noexcept nogil:
    # root_prior(t, n, s.edge) for a child slot, the raw prior read from the slot.
    if n == t.root and t.root_priors != NULL:
        return t.root_priors[s.edge]
    return s.prior


cdef inline double ending_bonus(const TreeCore* t, const Node* parent, Loc move) noexcept nogil:
    # White's score bonus for move at the root (search_root fills the table), 0 elsewhere.
    if parent != t.root or move == NULL_LOC:
        return 0.0
    return t.root_ending_bonus[move]
