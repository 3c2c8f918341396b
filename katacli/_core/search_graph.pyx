# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Graph search: graph hashes, the node table, mark-and-sweep and whole-graph walks
(contract: search_graph.pxd)."""
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memcpy, memset

from katacli._core.board cimport (
    Board, Loc, Color, Hash128, C_EMPTY, C_WHITE, MAX_ARR_SIZE, NULL_LOC, PASS_LOC, hash_xor,
)
from katacli._core.history cimport History, history_situation_ko_hash, history_pass_would_end_phase
from katacli._core.playout cimport Rng, rng_seed
from katacli._core.search_nodes cimport (
    TreeCore, Node, ChildSlot, NodeTableEntry, NODE_EXPANDED, MAX_EDGES, node_new, node_free_one,
    node_free_tree, node_attach_eval_cache, rand_hash, eval_cache_key,
)
from katacli._core.search_evalcache cimport FirstExploreEval, evalcache_retain, evalcache_update
from katacli._core.policy_rows cimport policy_rows_retain


cdef uint64_t GRAPH_ZOBRIST_SEED = 0x6a09e667f3bcc908ULL
cdef int64_t NODE_TABLE_INITIAL_SIZE = 1024
# The root's averages go into the eval cache only when passing is neither this share of its edge
# visits nor within this much utility of its best move (the root treats passing specially; KataGo's).
cdef int64_t EVAL_CACHE_ROOT_PASS_VISIT_DIVISOR = 8
cdef double EVAL_CACHE_ROOT_PASS_UTILITY_MARGIN = 0.05
# Odd multipliers folding the consecutive ending passes into the state hash.
cdef uint64_t CONSEC_PASS_MULT0 = 0x9E3779B97F4A7C15ULL
cdef uint64_t CONSEC_PASS_MULT1 = 0xC2B2AE3D27D4EB4FULL

cdef Hash128 _pass_ends_phase_hash
cdef Hash128 _game_over_hash
cdef Hash128 _force_non_terminal_hash

cdef void _init_graph_zobrist() noexcept nogil:
    global _pass_ends_phase_hash, _game_over_hash, _force_non_terminal_hash
    cdef Rng r
    rng_seed(&r, GRAPH_ZOBRIST_SEED)
    _pass_ends_phase_hash = rand_hash(&r)
    _game_over_hash = rand_hash(&r)
    _force_non_terminal_hash = rand_hash(&r)

_init_graph_zobrist()


# The draw value folded into graph hashes (any fixed value keeps a tree's hashes consistent).
cdef double GRAPH_DRAW_EQUIVALENT_WINS = 0.5


# ---- graph hash ------------------------------------------------------------------------------
cdef inline uint64_t _mix64(uint64_t z) noexcept nogil:
    # A 64-bit finaliser (avalanches every input bit), so chained hashes do not cancel by xor.
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef Hash128 graph_state_hash(const History* h, Color next_pla) noexcept nogil:
    cdef Hash128 r = history_situation_ko_hash(h, next_pla, GRAPH_DRAW_EQUIVALENT_WINS)
    if history_pass_would_end_phase(h, next_pla):
        r = hash_xor(r, _pass_ends_phase_hash)
    if h.is_game_finished:
        r = hash_xor(r, _game_over_hash)
    r.h0 += CONSEC_PASS_MULT0 * <uint64_t>h.consecutive_ending_passes
    r.h1 += CONSEC_PASS_MULT1 * <uint64_t>h.consecutive_ending_passes
    return r


cdef bint _count_empty_region_gt(const Board* b, unsigned char* counted, Loc start, int* count, int bound) noexcept nogil:
    """Add start's empty region (not yet counted) to count; True as soon as count exceeds bound."""
    cdef Loc stack[MAX_ARR_SIZE]
    cdef int top = 0, i
    cdef Loc loc, adj
    if counted[start]:
        return False
    counted[start] = 1
    count[0] += 1
    if count[0] > bound:
        return True
    stack[top] = start
    top += 1
    while top > 0:
        top -= 1
        loc = stack[top]
        for i in range(4):
            adj = <Loc>(loc + b.adj_offsets[i])
            if b.colors[adj] == C_EMPTY and not counted[adj]:
                counted[adj] = 1
                count[0] += 1
                if count[0] > bound:
                    return True
                stack[top] = adj
                top += 1
    return False


cdef bint repetition_bound_gt(const Board* b, Loc loc, int bound) noexcept nogil:
    """A repetition through the move at loc must change its chain (or suicided region) and the empty
    regions beside it; when those hold more than bound points, no cycle of at most bound moves can
    involve it, and the position may be shared whatever the history (KataGo's simpleRepetitionBoundGt)."""
    cdef unsigned char counted[MAX_ARR_SIZE]
    cdef int count = 0, i
    cdef Loc cur, lib
    if loc == NULL_LOC or loc == PASS_LOC:
        return False
    if b.colors[loc] == C_EMPTY:
        memset(counted, 0, sizeof(counted))
        return _count_empty_region_gt(b, counted, loc, &count, bound)
    count = b.chain_data[b.chain_head[loc]].num_locs
    if count + b.chain_data[b.chain_head[loc]].num_liberties > bound:
        return True
    memset(counted, 0, sizeof(counted))
    cur = loc
    while True:
        for i in range(4):
            lib = <Loc>(cur + b.adj_offsets[i])
            if b.colors[lib] == C_EMPTY and _count_empty_region_gt(b, counted, lib, &count, bound):
                return True
        cur = b.next_in_chain[cur]
        if cur == loc:
            break
    return False


cdef Hash128 graph_hash_after_move(Hash128 prev, const History* h, Color next_pla, int rep_bound) noexcept nogil:
    cdef Loc last = NULL_LOC if h.num_moves <= 0 else h.moves[h.num_moves - 1].loc
    cdef Hash128 state = graph_state_hash(h, next_pla)
    cdef Hash128 r
    if last == NULL_LOC or repetition_bound_gt(&h.board, last, rep_bound):
        return state
    # The move could be part of a short cycle: bind the position to the path that led here.
    r.h0 = _mix64(prev.h0 ^ prev.h1)
    r.h1 = _mix64(prev.h1 + 0x632BE59BD9B4E019ULL) + r.h0
    r.h0 += state.h0
    r.h1 += state.h1
    return r


# ---- node table --------------------------------------------------------------------------------
cdef void _table_insert(NodeTableEntry* table, int64_t size, Hash128 key, Node* n) noexcept nogil:
    cdef int64_t mask = size - 1
    cdef int64_t pos = <int64_t>(key.h0 & <uint64_t>mask)
    while table[pos].node != NULL:
        pos = (pos + 1) & mask
    table[pos].key = key
    table[pos].node = n


cdef void _table_resize(TreeCore* t, int64_t size) noexcept nogil:
    cdef NodeTableEntry* old = t.node_table
    cdef int64_t old_size = t.node_table_size, i
    t.node_table = <NodeTableEntry*>calloc(size, sizeof(NodeTableEntry))
    t.node_table_size = size
    for i in range(old_size):
        if old[i].node != NULL:
            _table_insert(t.node_table, size, old[i].key, old[i].node)
    free(old)


cdef Node* graph_find_or_new(TreeCore* t, Hash128 graph_hash, bint force_non_terminal, Color next_pla,
                             bint* created) noexcept nogil:
    cdef Hash128 key = hash_xor(graph_hash, _force_non_terminal_hash) if force_non_terminal else graph_hash
    cdef int64_t mask, pos
    cdef Node* n
    if (t.node_table_count + 1) * 2 > t.node_table_size:
        _table_resize(t, NODE_TABLE_INITIAL_SIZE if t.node_table_size == 0 else t.node_table_size * 2)
    mask = t.node_table_size - 1
    while True:
        pos = <int64_t>(key.h0 & <uint64_t>mask)
        while t.node_table[pos].node != NULL:
            if t.node_table[pos].key.h0 == key.h0 and t.node_table[pos].key.h1 == key.h1:
                break
            pos = (pos + 1) & mask
        if t.node_table[pos].node == NULL:
            break
        if t.node_table[pos].node.next_pla == next_pla:
            created[0] = False
            return t.node_table[pos].node
        # A collision with a node of the other player to move: store this one under a random key.
        key = rand_hash(&t.rng)
    n = node_new(next_pla)
    n.graph_hash = graph_hash
    n.force_non_terminal = force_non_terminal
    t.node_table[pos].key = key
    t.node_table[pos].node = n
    t.node_table_count += 1
    node_attach_eval_cache(t, n)
    created[0] = True
    return n


cdef Node* graph_copy_as_root(TreeCore* t, const Node* n) noexcept nogil:
    cdef Node* c = node_new(n.next_pla)
    memcpy(c, n, sizeof(Node))
    c.svb_entry = -1
    c.virtual_losses = 0
    evalcache_retain(c.eval_cache_entry)   # the copy holds the same snapshot (KataGo's copy constructor)
    if c.policy_rows != NULL:
        policy_rows_retain(c.policy_rows)   # the copy shares the policy row
    c.children = NULL
    if n.children_capacity > 0:
        c.children = <ChildSlot*>malloc(n.children_capacity * sizeof(ChildSlot))
        memcpy(c.children, n.children, n.num_children * sizeof(ChildSlot))
    if n.ownership != NULL:
        c.ownership = <float*>malloc(t.area * sizeof(float))
        memcpy(c.ownership, n.ownership, t.area * sizeof(float))
    if n.human_priors != NULL:
        c.human_priors = <float*>malloc(t.num_positions * sizeof(float))
        memcpy(c.human_priors, n.human_priors, t.num_positions * sizeof(float))
    return c


cdef int64_t begin_walk(TreeCore* t) noexcept nogil:
    t.walk_epoch += 1
    return t.walk_epoch


cdef void _mark_reachable(Node* n, int64_t epoch) noexcept nogil:
    cdef int i
    if n == NULL or n.walk_mark == epoch:
        return
    n.walk_mark = epoch
    for i in range(n.num_children):
        _mark_reachable(n.children[i].node, epoch)


cdef void graph_sweep_unreachable(TreeCore* t) noexcept nogil:
    cdef int64_t epoch = begin_walk(t), i, size = t.node_table_size
    cdef NodeTableEntry* old = t.node_table
    _mark_reachable(t.root, epoch)
    t.node_table = <NodeTableEntry*>calloc(size if size > 0 else 1, sizeof(NodeTableEntry))
    t.node_table_count = 0
    for i in range(size):
        if old[i].node == NULL:
            continue
        if old[i].node.walk_mark == epoch:
            _table_insert(t.node_table, size, old[i].key, old[i].node)
            t.node_table_count += 1
        else:
            node_free_one(t, old[i].node)
    free(old)


cdef void graph_free_all(TreeCore* t) noexcept nogil:
    cdef int64_t i
    for i in range(t.node_table_size):
        if t.node_table[i].node != NULL:
            node_free_one(t, t.node_table[i].node)
    free(t.node_table)
    t.node_table = NULL
    t.node_table_size = 0
    t.node_table_count = 0
    node_free_one(t, t.root)
    t.root = NULL


cdef void free_all_nodes(TreeCore* t) noexcept nogil:
    if t.graph_search or t.node_table_count > 0:
        graph_free_all(t)
    else:
        node_free_tree(t, t.root)
        t.root = NULL


# ---- eval cache -----------------------------------------------------------------------------------
cdef bint _root_averages_recordable(const Node* n) noexcept nogil:
    """Whether the root's averages may be recorded: not when passing is near its best move or well visited."""
    cdef int64_t total_edge_visits = 0, pass_edge_visits = 0
    cdef double max_self_utility = -1e50, pass_self_utility = -1e50, self_utility
    cdef int i
    for i in range(n.num_children):
        self_utility = n.children[i].node.stats.utility
        if n.next_pla != C_WHITE:
            self_utility = -self_utility
        total_edge_visits += n.children[i].edge_visits
        if self_utility > max_self_utility:
            max_self_utility = self_utility
        if n.children[i].move == PASS_LOC:
            pass_edge_visits += n.children[i].edge_visits
            pass_self_utility = self_utility
    return not (pass_edge_visits * EVAL_CACHE_ROOT_PASS_VISIT_DIVISOR >= total_edge_visits
                or pass_self_utility + EVAL_CACHE_ROOT_PASS_UTILITY_MARGIN >= max_self_utility)


cdef void _record_node(TreeCore* t, const Node* n, FirstExploreEval* children) noexcept nogil:
    cdef int i, count = 0
    cdef const Node* c
    for i in range(n.num_children):
        c = n.children[i].node
        if c.stats.visits >= t.eval_cache_min_visits:
            children[count].move = n.children[i].move
            children[count].win_loss = <float>c.stats.win_loss
            children[count].score_mean = <float>c.stats.score_mean
            children[count].weight = <float>c.stats.visits
            count += 1
    evalcache_update(t.eval_cache, eval_cache_key(t, n.graph_hash), <double>n.stats.visits,
                     n != t.root or _root_averages_recordable(n), n.stats.win_loss, n.stats.no_result,
                     n.stats.score_mean, n.stats.lead, children, count)


cdef void _record_walk(TreeCore* t, Node* n, int64_t epoch, FirstExploreEval* buffer) noexcept nogil:
    cdef int i
    if n.walk_mark == epoch:
        return
    n.walk_mark = epoch
    for i in range(n.num_children):
        _record_walk(t, n.children[i].node, epoch, buffer)
    if n.stats.visits >= t.eval_cache_min_visits and not n.force_non_terminal:
        _record_node(t, n, buffer)


cdef void graph_record_eval_cache(TreeCore* t) noexcept nogil:
    cdef FirstExploreEval* buffer
    if t.eval_cache == NULL or not t.graph_search or t.root == NULL or t.mirroring_pla != C_EMPTY:
        return
    buffer = <FirstExploreEval*>malloc(MAX_EDGES * sizeof(FirstExploreEval))
    _record_walk(t, t.root, begin_walk(t), buffer)
    free(buffer)


# ---- whole-graph checks --------------------------------------------------------------------------
cdef int64_t _sum_virtual_losses(const Node* n, int64_t epoch) noexcept nogil:
    cdef int64_t total
    cdef int i
    if n == NULL or n.walk_mark == epoch:
        return 0
    (<Node*>n).walk_mark = epoch
    total = n.virtual_losses
    for i in range(n.num_children):
        total += _sum_virtual_losses(n.children[i].node, epoch)
    return total


cdef int64_t graph_virtual_losses(TreeCore* t) noexcept nogil:
    return _sum_virtual_losses(t.root, begin_walk(t))


cdef int64_t _count_nodes(const Node* n, int64_t epoch) noexcept nogil:
    cdef int64_t total = 1
    cdef int i
    if n == NULL or n.walk_mark == epoch:
        return 0
    (<Node*>n).walk_mark = epoch
    for i in range(n.num_children):
        total += _count_nodes(n.children[i].node, epoch)
    return total


cdef int64_t graph_node_count(TreeCore* t) noexcept nogil:
    return _count_nodes(t.root, begin_walk(t))


cdef inline bint _same_float(float a, float b) noexcept nogil:
    return a == b or (a != a and b != b)   # NaN: the same when both are


cdef bint _visits_consistent(const Node* n, int64_t epoch, bint tree) noexcept nogil:
    cdef int64_t edge_sum = 0
    cdef int i
    if n == NULL or n.walk_mark == epoch:
        return True
    (<Node*>n).walk_mark = epoch
    if n.policy != NULL and n.next_new_edge >= 0 and not _same_float(n.next_new_prior, n.policy[n.next_new_edge]):
        return False   # the kept prior of the next unexplored edge went stale
    for i in range(n.num_children):
        if n.policy != NULL and n.children[i].edge >= 0 and not _same_float(n.children[i].prior,
                                                                             n.policy[n.children[i].edge]):
            return False   # a child slot's kept prior went stale (its policy row changed without node_mark_children)
        edge_sum += n.children[i].edge_visits
        # In a graph a cycle or a second parent may count more edge visits than the child has.
        if tree and n.children[i].edge_visits > n.children[i].node.stats.visits:
            return False
        if not _visits_consistent(n.children[i].node, epoch, tree):
            return False
    if n.state == NODE_EXPANDED and n.num_children > 0 and n.stats.visits < 1 + edge_sum:
        return False
    return True


cdef bint graph_visits_consistent(TreeCore* t) noexcept nogil:
    return _visits_consistent(t.root, begin_walk(t), not t.graph_search)
