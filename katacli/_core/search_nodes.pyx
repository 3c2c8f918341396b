# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Node and subtree-value-bias-table storage (contract: search_nodes.pxd)."""
from libc.stdint cimport int64_t, int16_t, int32_t, uint64_t
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memcpy, memset

from katacli._core.board cimport (
    Board, Loc, Color, Hash128, C_BLACK, C_WHITE, MAX_ARR_SIZE, NULL_LOC, PASS_LOC, loc_of, loc_x, loc_y, hash_xor,
    board_num_liberties,
)
from katacli._core.history cimport History, history_recent_board
from katacli._core.playout cimport Rng, rng_seed
from katacli._core.search_evalcache cimport evalcache_find, evalcache_release
from katacli._core.policy_rows cimport PolicyRows, policy_rows_retain, policy_rows_release


# Subtree value bias entries below this weight are ignored.
cdef double SVB_MIN_WEIGHT = 0.001
# Local pattern used by the subtree value bias table: 5x5 around the move.
cdef int SVB_PATTERN_RADIUS = 2
cdef int SVB_PATTERN_LEN = 5
cdef int SVB_INITIAL_INDEX_SIZE = 1024
cdef uint64_t SVB_ZOBRIST_SEED = 0x5eed5eed12345678ULL


# ---- Zobrist tables for the subtree value bias keys ----------------------------------------
cdef Hash128 _svb_move_locs[MAX_ARR_SIZE][2]
cdef Hash128 _svb_ko_ban[MAX_ARR_SIZE]
cdef Hash128 _svb_pattern[3][25]
cdef Hash128 _svb_atari[25]
cdef Hash128 _svb_pla[3]

cdef void _init_svb_zobrist() noexcept nogil:
    cdef Rng r
    cdef int i, j
    rng_seed(&r, SVB_ZOBRIST_SEED)
    for i in range(MAX_ARR_SIZE):
        _svb_move_locs[i][0] = rand_hash(&r)
        _svb_move_locs[i][1] = rand_hash(&r)
        _svb_ko_ban[i] = rand_hash(&r)
    for i in range(3):
        _svb_pla[i] = rand_hash(&r)
        for j in range(25):
            _svb_pattern[i][j] = rand_hash(&r)
    for j in range(25):
        _svb_atari[j] = rand_hash(&r)

_init_svb_zobrist()


# ---- nodes -------------------------------------------------------------------------------
cdef Node* node_new(Color next_pla) noexcept nogil:
    cdef Node* n = <Node*>calloc(1, sizeof(Node))
    n.next_pla = next_pla
    n.svb_entry = -1
    n.age = -1
    return n


cdef void svb_release(TreeCore* t, Node* n) noexcept nogil:
    """Take back most of a dying node's contribution to its table entry (KataGo's removeSubtreeValueBias)."""
    cdef SvbEntry* e
    if n.svb_entry < 0:
        return
    e = &t.svb_entries[n.svb_entry]
    e.delta_utility_sum -= n.svb_last_delta_sum * t.cfg.subtree_value_bias_free_prop
    e.weight_sum -= n.svb_last_weight * t.cfg.subtree_value_bias_free_prop
    e.refs -= 1
    n.svb_entry = -1


cdef void tree_init_positions(TreeCore* t) noexcept nogil:
    cdef int x, y, i
    t.num_positions = t.area + 1
    for i in range(MAX_ARR_SIZE):
        t.loc_edge[i] = -1
    for y in range(t.y_size):
        for x in range(t.x_size):
            t.edge_loc[y * t.x_size + x] = loc_of(x, y, t.x_size)
            t.loc_edge[loc_of(x, y, t.x_size)] = <int16_t>(y * t.x_size + x)
    t.edge_loc[t.area] = PASS_LOC
    t.loc_edge[PASS_LOC] = <int16_t>t.area


cdef void node_free_one(TreeCore* t, Node* n) noexcept nogil:
    if n == NULL:
        return
    svb_release(t, n)
    evalcache_release(n.eval_cache_entry)
    policy_rows_release(n.policy_rows)
    free(n.children)
    free(n.ownership)
    free(n.human_priors)
    free(n)


cdef void node_attach_eval_cache(TreeCore* t, Node* n) noexcept nogil:
    if t.eval_cache == NULL or not t.graph_search or n.eval_cache_entry != NULL or t.mirroring_pla != C_EMPTY:
        return
    n.eval_cache_entry = evalcache_find(t.eval_cache, eval_cache_key(t, n.graph_hash))


cdef void node_free_tree(TreeCore* t, Node* n) noexcept nogil:
    cdef int i
    if n == NULL:
        return
    for i in range(n.num_children):
        node_free_tree(t, n.children[i].node)
    node_free_one(t, n)


cdef inline void _set_explored(Node* n, int edge) noexcept nogil:
    n.explored[edge >> 6] |= (<uint64_t>1) << (edge & 63)


cdef int node_add_child(const TreeCore* t, Node* n, int edge, Node* child) noexcept nogil:
    cdef int slot
    if n.num_children == n.children_capacity:
        n.children_capacity = 4 if n.children_capacity == 0 else n.children_capacity * 2
        n.children = <ChildSlot*>realloc(n.children, n.children_capacity * sizeof(ChildSlot))
    slot = n.num_children
    n.children[slot].node = child
    n.children[slot].edge_visits = 0
    n.children[slot].move = t.edge_loc[edge]
    n.children[slot].edge = <int16_t>edge
    n.children[slot].prior = n.policy[edge] if n.policy != NULL else -1.0
    _set_explored(n, edge)
    n.num_children += 1
    return slot


cdef void node_mark_children(const TreeCore* t, Node* n) noexcept nogil:
    cdef int slot, e
    memset(n.explored, 0, sizeof(n.explored))
    for slot in range(n.num_children):
        e = edge_of_move(t, n, n.children[slot].move)
        n.children[slot].edge = <int16_t>e
        n.children[slot].prior = n.policy[e] if e >= 0 else -1.0
        if e >= 0:
            _set_explored(n, e)
    n.next_new_edge = NEXT_NEW_UNKNOWN


cdef void node_set_policy(const TreeCore* t, Node* n, const float* row, PolicyRows* owner) noexcept nogil:
    cdef int e, count = 0
    policy_rows_retain(owner)
    policy_rows_release(n.policy_rows)
    n.policy_rows = owner
    n.policy = row
    free(n.human_priors)   # from the old evaluation; store_human_priors sets them again
    n.human_priors = NULL
    for e in range(t.num_positions):
        if row[e] >= 0.0:
            count += 1
    n.num_edges = <int16_t>count
    node_mark_children(t, n)


cdef void node_drop_edgeless_children(Node* n) noexcept nogil:
    """Detach children whose move has no edge any more (a re-evaluation found it illegal); in graph
    search they stay in the node table until the next sweep."""
    cdef int i, kept = 0
    for i in range(n.num_children):
        if n.children[i].edge >= 0:
            n.children[kept] = n.children[i]
            kept += 1
    n.num_children = kept
    n.next_new_edge = NEXT_NEW_UNKNOWN


cdef int node_next_new_edge(const TreeCore* t, Node* n) noexcept nogil:
    """The first edge in prior order without a child (KataGo scans the policy for it at each visit;
    here the answer is kept until that edge gets a child or the children change)."""
    cdef int e, best = -1
    cdef float best_prior = -1.0
    if n.next_new_edge == -1 or (n.next_new_edge >= 0 and not edge_explored(n, n.next_new_edge)):
        return n.next_new_edge
    if n.policy != NULL:
        for e in range(t.num_positions):
            # Strictly greater: among equal priors the lowest position, as prior order has it (-1: no edge).
            if n.policy[e] > best_prior and not edge_explored(n, e):
                best_prior = n.policy[e]
                best = e
    n.next_new_edge = <int16_t>best
    n.next_new_prior = best_prior
    return best


cdef enum:
    EDGE_SORT_RUN = 16      # runs sorted by insertion before merging


cdef int node_edges_in_prior_order(const TreeCore* t, const Node* n, int16_t* out) noexcept nogil:
    """n's edges in prior order: short runs sorted by insertion, then merged (the comparison inline;
    qsort's call per comparison cost ~2% of a search when edges were sorted at every evaluation)."""
    cdef int16_t tmp[MAX_EDGES]
    cdef int16_t* src = out
    cdef int16_t* dst = tmp
    cdef int16_t* swap
    cdef int16_t e
    cdef int count = 0, lo, hi, i, j, k, mid, width
    if n.policy == NULL:
        return 0
    for i in range(t.num_positions):
        if n.policy[i] >= 0.0:
            out[count] = <int16_t>i
            count += 1
    lo = 0
    while lo < count:
        hi = lo + EDGE_SORT_RUN if lo + EDGE_SORT_RUN < count else count
        for i in range(lo + 1, hi):
            e = out[i]
            j = i
            while j > lo and edge_before(n, e, out[j - 1]):
                out[j] = out[j - 1]
                j -= 1
            out[j] = e
        lo = hi
    width = EDGE_SORT_RUN
    while width < count:
        lo = 0
        while lo < count:
            mid = lo + width if lo + width < count else count
            hi = lo + 2 * width if lo + 2 * width < count else count
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if edge_before(n, src[j], src[i]):
                    dst[k] = src[j]
                    j += 1
                else:
                    dst[k] = src[i]
                    i += 1
                k += 1
            while i < mid:
                dst[k] = src[i]
                i += 1
                k += 1
            while j < hi:
                dst[k] = src[j]
                j += 1
                k += 1
            lo = hi
        swap = src
        src = dst
        dst = swap
        width *= 2
    if src != out:
        memcpy(out, src, count * sizeof(int16_t))
    return count


# ---- subtree value bias table -------------------------------------------------------------
cdef Hash128 _svb_pattern_hash(const Board* b, Loc loc, Color pla) noexcept nogil:
    cdef Hash128 h = _svb_pla[pla]
    cdef int x, y, dx, dy, dx_min, dx_max, dy_min, dy_max, cell
    cdef Loc l2
    cdef Color c
    if loc == PASS_LOC or loc == NULL_LOC:
        return h
    x = loc_x(loc, b.x_size)
    y = loc_y(loc, b.x_size)
    dx_min = -SVB_PATTERN_RADIUS if x >= SVB_PATTERN_RADIUS else -x
    dx_max = SVB_PATTERN_RADIUS if x < b.x_size - SVB_PATTERN_RADIUS else b.x_size - 1 - x
    dy_min = -SVB_PATTERN_RADIUS if y >= SVB_PATTERN_RADIUS else -y
    dy_max = SVB_PATTERN_RADIUS if y < b.y_size - SVB_PATTERN_RADIUS else b.y_size - 1 - y
    for dy in range(dy_min, dy_max + 1):
        for dx in range(dx_min, dx_max + 1):
            l2 = <Loc>(loc + dx + dy * (b.x_size + 1))
            cell = (dy + SVB_PATTERN_RADIUS) * SVB_PATTERN_LEN + dx + SVB_PATTERN_RADIUS
            c = b.colors[l2]
            h = hash_xor(h, _svb_pattern[c][cell])
            if (c == C_BLACK or c == C_WHITE) and board_num_liberties(b, l2) == 1:
                h = hash_xor(h, _svb_atari[cell])
    return h


cdef void _svb_rebuild_index(TreeCore* t, int size) noexcept nogil:
    cdef int i, pos, mask = size - 1
    free(t.svb_index)
    t.svb_index = <int32_t*>calloc(size, sizeof(int32_t))
    t.svb_index_size = size
    for i in range(t.svb_count):
        pos = <int>(t.svb_entries[i].key.h0 & <uint64_t>mask)
        while t.svb_index[pos] != 0:
            pos = (pos + 1) & mask
        t.svb_index[pos] = i + 1


cdef int svb_get(TreeCore* t, Hash128 key) noexcept nogil:
    cdef int mask, pos, idx
    if t.svb_index == NULL or (t.svb_count + 1) * 2 > t.svb_index_size:
        _svb_rebuild_index(t, SVB_INITIAL_INDEX_SIZE if t.svb_index_size == 0 else t.svb_index_size * 2)
    mask = t.svb_index_size - 1
    pos = <int>(key.h0 & <uint64_t>mask)
    while t.svb_index[pos] != 0:
        idx = t.svb_index[pos] - 1
        if t.svb_entries[idx].key.h0 == key.h0 and t.svb_entries[idx].key.h1 == key.h1:
            t.svb_entries[idx].refs += 1
            return idx
        pos = (pos + 1) & mask
    if t.svb_count == t.svb_capacity:
        t.svb_capacity = 1024 if t.svb_capacity == 0 else t.svb_capacity * 2
        t.svb_entries = <SvbEntry*>realloc(t.svb_entries, t.svb_capacity * sizeof(SvbEntry))
    idx = t.svb_count
    t.svb_count += 1
    t.svb_entries[idx].key = key
    t.svb_entries[idx].delta_utility_sum = 0.0
    t.svb_entries[idx].weight_sum = 0.0
    t.svb_entries[idx].refs = 1
    t.svb_index[pos] = idx + 1
    return idx


cdef void svb_reset(TreeCore* t) noexcept nogil:
    free(t.svb_entries)
    free(t.svb_index)
    t.svb_entries = NULL
    t.svb_index = NULL
    t.svb_count = t.svb_capacity = t.svb_index_size = 0


cdef void svb_clear_unused(TreeCore* t) noexcept nogil:
    """Entries no node refers to start again from zero (KataGo drops them)."""
    cdef int i
    for i in range(t.svb_count):
        if t.svb_entries[i].refs <= 0:
            t.svb_entries[i].delta_utility_sum = 0.0
            t.svb_entries[i].weight_sum = 0.0
            t.svb_entries[i].refs = 0


cdef Hash128 svb_move_key(const History* h, Loc prev_move, Loc move, Color pla) noexcept nogil:
    """The table key of move by pla answering prev_move: both moves, the 5x5 pattern and a ko ban before it."""
    cdef const Board* before = history_recent_board(h, 1)
    cdef Hash128 key = hash_xor(_svb_move_locs[prev_move][0], _svb_move_locs[move][1])
    key = hash_xor(key, _svb_pattern_hash(before, move, pla))
    if before.ko_loc != NULL_LOC:
        key = hash_xor(key, _svb_ko_ban[before.ko_loc])
    return key


cdef double svb_bias(const TreeCore* t, const Node* n) noexcept nogil:
    cdef const SvbEntry* e
    if t.cfg.subtree_value_bias_factor == 0.0 or n.svb_entry < 0:
        return 0.0
    e = &t.svb_entries[n.svb_entry]
    if e.weight_sum > SVB_MIN_WEIGHT:
        return t.cfg.subtree_value_bias_factor * e.delta_utility_sum / e.weight_sum
    return 0.0
