# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Benson pass-alive analysis, territory and independent-life areas (see area.pxd).

Everything is nogil and allocation-free: scratch arrays live on the C stack
(a few kilobytes). Region and chain bookkeeping is per call.
"""
from libc.string cimport memset
from libc.stdint cimport int16_t

from katacli._core.board cimport (
    Board, Loc, Color, GoBoard,
    C_EMPTY, C_BLACK, C_WHITE, MAX_ARR_SIZE, MAX_PLAY_SIZE, NULL_LOC,
    loc_of, opp_of, board_num_liberties,
)

cdef enum:
    NO_REGION = -1
    MAX_ADJACENT_CHAINS = 4      # a point touches at most 4 chains
    MIN_VITAL_REGIONS = 2        # Benson: a chain needs two vital regions to live
    INTERNAL_POINTS_CAP = 2      # we only need to know 0, 1 or "2 or more"


cdef struct Regions:
    # Maximal connected sets of points that are empty or hold the opponent's stones.
    int count
    int16_t region_of[MAX_ARR_SIZE]             # NO_REGION on own stones and off-board
    Loc points[MAX_PLAY_SIZE]                   # each region's points, contiguous
    int16_t start[MAX_PLAY_SIZE]
    int16_t size[MAX_PLAY_SIZE]
    Loc vital_for[MAX_PLAY_SIZE][MAX_ADJACENT_CHAINS]   # chain heads this region is vital to
    unsigned char num_vital[MAX_PLAY_SIZE]
    unsigned char internal_points[MAX_PLAY_SIZE]  # points not adjacent to any own stone, capped
    bint has_opponent_stone[MAX_PLAY_SIZE]
    bint borders_dead_chain[MAX_PLAY_SIZE]      # touches an own chain that is not pass-alive


cdef inline bint _adjacent_to_color(const Board* b, Loc loc, Color c) noexcept nogil:
    cdef int i
    for i in range(4):
        if b.colors[loc + b.adj_offsets[i]] == c:
            return True
    return False

cdef inline bint _adjacent_to_chain(const Board* b, Loc loc, Color c, Loc head) noexcept nogil:
    cdef int i
    cdef Loc adj
    for i in range(4):
        adj = loc + b.adj_offsets[i]
        if b.colors[adj] == c and b.chain_head[adj] == head:
            return True
    return False


cdef void _build_regions(const Board* b, Color pla, bint multi_stone_suicide_legal, Regions* r) noexcept nogil:
    cdef Color opp = opp_of(pla)
    cdef int x, y, i, k, kept, head_idx, tail
    cdef Loc seed, loc, adj, head
    cdef int16_t idx
    cdef unsigned char n
    r.count = 0
    for i in range(MAX_ARR_SIZE):
        r.region_of[i] = NO_REGION
    tail = 0
    for y in range(b.y_size):
        for x in range(b.x_size):
            seed = loc_of(x, y, b.x_size)
            if b.colors[seed] != C_EMPTY or r.region_of[seed] != NO_REGION:
                continue
            idx = <int16_t>r.count
            r.count += 1
            r.start[idx] = <int16_t>tail
            r.internal_points[idx] = 0
            r.has_opponent_stone[idx] = False
            r.borders_dead_chain[idx] = False
            # Candidates for vitality: the chains touching the seed (an empty point).
            n = 0
            for i in range(4):
                adj = seed + b.adj_offsets[i]
                if b.colors[adj] == pla:
                    head = b.chain_head[adj]
                    for k in range(n):
                        if r.vital_for[idx][k] == head:
                            break
                    else:
                        r.vital_for[idx][n] = head
                        n += 1
            # Breadth-first flood; r.points doubles as the queue.
            r.region_of[seed] = idx
            r.points[tail] = seed
            tail += 1
            head_idx = r.start[idx]
            while head_idx < tail:
                loc = r.points[head_idx]
                head_idx += 1
                # Vital means every point (every empty point unless the opponent may
                # fill its own stones' liberties by multi-stone suicide) touches the chain.
                if n > 0 and (multi_stone_suicide_legal or b.colors[loc] == C_EMPTY):
                    kept = 0
                    for k in range(n):
                        if _adjacent_to_chain(b, loc, pla, r.vital_for[idx][k]):
                            r.vital_for[idx][kept] = r.vital_for[idx][k]
                            kept += 1
                    n = <unsigned char>kept
                if r.internal_points[idx] < INTERNAL_POINTS_CAP and not _adjacent_to_color(b, loc, pla):
                    r.internal_points[idx] += 1
                if b.colors[loc] == opp:
                    r.has_opponent_stone[idx] = True
                for i in range(4):
                    adj = loc + b.adj_offsets[i]
                    if (b.colors[adj] == C_EMPTY or b.colors[adj] == opp) and r.region_of[adj] == NO_REGION:
                        r.region_of[adj] = idx
                        r.points[tail] = adj
                        tail += 1
            r.size[idx] = <int16_t>(tail - r.start[idx])
            r.num_vital[idx] = n


cdef void _mark_area_for_player(
        const Board* b, Color pla, bint safe_big_territories, bint unsafe_big_territories,
        bint multi_stone_suicide_legal, Color* result) noexcept nogil:
    cdef Regions regions
    cdef Regions* r = &regions
    cdef Loc heads[MAX_PLAY_SIZE]
    cdef int16_t vital_count[MAX_ARR_SIZE]     # by chain head
    cdef bint dead[MAX_PLAY_SIZE]              # by index into heads
    cdef int num_heads = 0, i, k, j, idx
    cdef Loc loc, cur, adj
    cdef bint killed_any, mark_all, mark_unclaimed

    _build_regions(b, pla, multi_stone_suicide_legal, r)
    for loc in range(MAX_ARR_SIZE):
        if b.colors[loc] == pla and b.chain_head[loc] == loc:
            heads[num_heads] = loc
            dead[num_heads] = False
            vital_count[loc] = 0
            num_heads += 1
    if num_heads == 0:
        return   # a player without stones owns nothing
    for idx in range(r.count):
        for k in range(r.num_vital[idx]):
            vital_count[r.vital_for[idx][k]] += 1

    # Benson: remove chains short of vital regions until nothing changes. A region
    # touching a removed chain is vital to no one any more.
    killed_any = True
    while killed_any:
        killed_any = False
        for i in range(num_heads):
            if dead[i] or vital_count[heads[i]] >= MIN_VITAL_REGIONS:
                continue
            dead[i] = True
            killed_any = True
            cur = heads[i]
            while True:
                for j in range(4):
                    adj = cur + b.adj_offsets[j]
                    idx = r.region_of[adj]
                    if idx != NO_REGION and not r.borders_dead_chain[idx]:
                        r.borders_dead_chain[idx] = True
                        for k in range(r.num_vital[idx]):
                            vital_count[r.vital_for[idx][k]] -= 1
                cur = b.next_in_chain[cur]
                if cur == heads[i]:
                    break

    for i in range(num_heads):
        if not dead[i]:
            cur = heads[i]
            while True:
                result[cur] = pla
                cur = b.next_in_chain[cur]
                if cur == heads[i]:
                    break

    for idx in range(r.count):
        # Pass-alive territory (at most one point not touching our stones), or a safe big
        # territory: both are ours outright, even over the opponent's unsafe marks.
        mark_all = not r.borders_dead_chain[idx] and (
            r.internal_points[idx] <= 1 or (safe_big_territories and not r.has_opponent_stone[idx]))
        # Unsafe big territory must not overwrite the opponent's pass-alive claims
        # (e.g. our dead stones enclosing it inside their territory).
        mark_unclaimed = not mark_all and unsafe_big_territories and not r.has_opponent_stone[idx]
        if mark_all:
            for k in range(r.start[idx], r.start[idx] + r.size[idx]):
                result[r.points[k]] = pla
        elif mark_unclaimed:
            for k in range(r.start[idx], r.start[idx] + r.size[idx]):
                if result[r.points[k]] == C_EMPTY:
                    result[r.points[k]] = pla


cdef struct EmptyComponents:
    # Maximal connected sets of empty points, for both players at once (see _empty_components).
    int count
    int16_t comp_of[MAX_ARR_SIZE]               # NO_REGION off the empty points
    unsigned char touches[MAX_PLAY_SIZE]        # bit C_BLACK / C_WHITE: borders a stone of that colour
    bint needs_benson[C_WHITE + 1]              # by player: some chain may have two vital regions

cdef void _empty_components(const Board* b, EmptyComponents* e) noexcept nogil:
    """Flood the empty points once, and tell per player whether Benson's analysis can find anything.

    A region vital to a chain (Benson) holds at least one empty point, and every empty point of it
    touches the chain, so each of the chain's vital regions holds its own empty component whose
    every point touches the chain. A player none of whose chains has two such components has no
    chain with two vital regions: all of its chains die at once, every region of its borders a
    dead chain, and all it owns is the unsafe big territory, the components touching its stones
    and none of the opponent's (see _mark_unsafe_only)."""
    cdef unsigned char candidate_count[C_WHITE + 1][MAX_ARR_SIZE]   # by chain head
    cdef Loc candidates[C_WHITE + 1][MAX_ADJACENT_CHAINS]
    cdef int n[C_WHITE + 1]
    cdef Loc queue[MAX_PLAY_SIZE]
    cdef int x, y, i, k, kept, head_idx, tail, pla
    cdef Loc seed, loc, adj, head
    cdef Color c
    cdef int16_t idx
    memset(candidate_count, 0, sizeof(candidate_count))
    for i in range(MAX_ARR_SIZE):
        e.comp_of[i] = NO_REGION
    e.count = 0
    e.needs_benson[C_BLACK] = False
    e.needs_benson[C_WHITE] = False
    for y in range(b.y_size):
        for x in range(b.x_size):
            seed = loc_of(x, y, b.x_size)
            if b.colors[seed] != C_EMPTY or e.comp_of[seed] != NO_REGION:
                continue
            idx = <int16_t>e.count
            e.count += 1
            e.touches[idx] = 0
            # Candidates: the chains touching the seed; kept while every point touches them.
            n[C_BLACK] = 0
            n[C_WHITE] = 0
            for i in range(4):
                adj = seed + b.adj_offsets[i]
                c = b.colors[adj]
                if c == C_BLACK or c == C_WHITE:
                    head = b.chain_head[adj]
                    for k in range(n[c]):
                        if candidates[c][k] == head:
                            break
                    else:
                        candidates[c][n[c]] = head
                        n[c] += 1
            e.comp_of[seed] = idx
            queue[0] = seed
            head_idx = 0
            tail = 1
            while head_idx < tail:
                loc = queue[head_idx]
                head_idx += 1
                for i in range(4):
                    adj = loc + b.adj_offsets[i]
                    c = b.colors[adj]
                    if c == C_EMPTY:
                        if e.comp_of[adj] == NO_REGION:
                            e.comp_of[adj] = idx
                            queue[tail] = adj
                            tail += 1
                    elif c == C_BLACK or c == C_WHITE:
                        e.touches[idx] |= 1 << c
                for pla in range(C_BLACK, C_WHITE + 1):
                    if n[pla] == 0:
                        continue
                    kept = 0
                    for k in range(n[pla]):
                        if _adjacent_to_chain(b, loc, <Color>pla, candidates[pla][k]):
                            candidates[pla][kept] = candidates[pla][k]
                            kept += 1
                    n[pla] = kept
            for pla in range(C_BLACK, C_WHITE + 1):
                for k in range(n[pla]):
                    head = candidates[pla][k]
                    candidate_count[pla][head] += 1
                    if candidate_count[pla][head] >= MIN_VITAL_REGIONS:
                        e.needs_benson[pla] = True


cdef void _mark_unsafe_only(const Board* b, const EmptyComponents* e, Color pla, Color* result) noexcept nogil:
    """_mark_area_for_player's result for a player with no chain that can have two vital regions
    (see _empty_components), with unsafe big territories: the empty components touching its stones
    and not the opponent's, on points not already claimed."""
    cdef int x, y
    cdef Loc loc
    cdef int16_t idx
    cdef unsigned char wanted = 1 << pla
    for y in range(b.y_size):
        for x in range(b.x_size):
            loc = loc_of(x, y, b.x_size)
            idx = e.comp_of[loc]
            if idx != NO_REGION and e.touches[idx] == wanted and result[loc] == C_EMPTY:
                result[loc] = pla


cdef void area_calculate(
        const Board* b, Color* result, bint non_pass_alive_stones, bint safe_big_territories,
        bint unsafe_big_territories, bint multi_stone_suicide_legal) noexcept nogil:
    cdef int x, y
    cdef Loc loc
    cdef EmptyComponents comps
    cdef int player
    cdef Color pla
    memset(result, C_EMPTY, MAX_ARR_SIZE * sizeof(Color))
    # One flood of the empty points first: most positions have no chain that could be pass-alive,
    # and then Benson's two floods (one per player, over empty points and opponent stones) are not
    # needed to know the answer.
    _empty_components(b, &comps)
    # Order matters: white's outright marks may overwrite black's unsafe ones.
    for player in range(C_BLACK, C_WHITE + 1):
        pla = <Color>player
        if comps.needs_benson[pla]:
            _mark_area_for_player(b, pla, safe_big_territories, unsafe_big_territories,
                                  multi_stone_suicide_legal, result)
        elif unsafe_big_territories:
            _mark_unsafe_only(b, &comps, pla, result)
    if non_pass_alive_stones:
        for y in range(b.y_size):
            for x in range(b.x_size):
                loc = loc_of(x, y, b.x_size)
                if result[loc] == C_EMPTY:
                    result[loc] = b.colors[loc]


cdef bint _touches_seki_evidence(const Board* b, const Color* basic, Loc loc) noexcept nogil:
    """An owner's stone in atari, or a neighbouring dame point (empty and unowned)."""
    cdef int i
    cdef Loc adj
    if b.colors[loc] == basic[loc] and board_num_liberties(b, loc) == 1:
        return True
    for i in range(4):
        adj = loc + b.adj_offsets[i]
        if b.colors[adj] == C_EMPTY and basic[adj] == C_EMPTY:
            return True
    return False

cdef void _flood_owner(const Color* basic, const Board* b, Loc seed, unsigned char* seen, Loc* queue, Color* copy_to) noexcept nogil:
    """Mark (and optionally copy to copy_to) the connected component of points owned like seed."""
    cdef Color owner = basic[seed]
    cdef int head = 0, tail = 1, i
    cdef Loc loc, adj
    queue[0] = seed
    seen[seed] = 1
    while head < tail:
        loc = queue[head]
        head += 1
        if copy_to != NULL:
            copy_to[loc] = owner
        for i in range(4):
            adj = loc + b.adj_offsets[i]
            if basic[adj] == owner and not seen[adj]:
                seen[adj] = 1
                queue[tail] = adj
                tail += 1

cdef void area_independent_life(
        const Board* b, Color* result, int* white_minus_black_independent_life_region_count,
        bint keep_territories, bint keep_stones, bint multi_stone_suicide_legal) noexcept nogil:
    cdef Color basic[MAX_ARR_SIZE]
    cdef unsigned char seen[MAX_ARR_SIZE]
    cdef Loc queue[MAX_ARR_SIZE]
    cdef int x, y, count = 0
    cdef Loc loc
    area_calculate(b, basic, True, True, True, multi_stone_suicide_legal)
    memset(result, C_EMPTY, MAX_ARR_SIZE * sizeof(Color))
    memset(seen, 0, MAX_ARR_SIZE)
    # Components touching dame or holding an owner's stone in atari are seki-like:
    # marking them seen excludes them from the result.
    for y in range(b.y_size):
        for x in range(b.x_size):
            loc = loc_of(x, y, b.x_size)
            if basic[loc] != C_EMPTY and not seen[loc] and _touches_seki_evidence(b, basic, loc):
                _flood_owner(basic, b, loc, seen, queue, NULL)
    for y in range(b.y_size):
        for x in range(b.x_size):
            loc = loc_of(x, y, b.x_size)
            if basic[loc] != C_EMPTY and not seen[loc]:
                count += 1 if basic[loc] == C_WHITE else -1
                _flood_owner(basic, b, loc, seen, queue, result)
    white_minus_black_independent_life_region_count[0] = count
    for y in range(b.y_size):
        for x in range(b.x_size):
            loc = loc_of(x, y, b.x_size)
            if basic[loc] == C_EMPTY:
                continue
            if keep_territories and basic[loc] != b.colors[loc]:
                result[loc] = basic[loc]
            if keep_stones and basic[loc] == b.colors[loc]:
                result[loc] = basic[loc]


cdef bint area_is_non_pass_alive_self_connection(
        const Board* b, Loc loc, Color pla, const Color* pass_alive_area) noexcept nogil:
    cdef Loc unowned_head = NULL_LOC, adj
    cdef int i
    if b.colors[loc] != C_EMPTY or pass_alive_area[loc] == pla:
        return False
    for i in range(4):
        adj = loc + b.adj_offsets[i]
        if b.colors[adj] == pla and pass_alive_area[adj] == C_EMPTY:
            unowned_head = b.chain_head[adj]
            break
    if unowned_head == NULL_LOC:
        return False
    for i in range(4):
        adj = loc + b.adj_offsets[i]
        if b.colors[adj] == pla and b.chain_head[adj] != unowned_head:
            return True
    return False


# ---- Python helpers (tests and tools) ---------------------------------------------
cdef list _rows(const Board* b, const Color* area):
    return [[area[loc_of(x, y, b.x_size)] for x in range(b.x_size)] for y in range(b.y_size)]

def area_map(GoBoard g, bint non_pass_alive_stones=False, bint safe_big_territories=False,
             bint unsafe_big_territories=False, bint multi_stone_suicide_legal=False):
    """area_calculate as rows (top to bottom) of colour codes 0 empty, 1 black, 2 white."""
    cdef Color area[MAX_ARR_SIZE]
    area_calculate(&g.b, area, non_pass_alive_stones, safe_big_territories,
                   unsafe_big_territories, multi_stone_suicide_legal)
    return _rows(&g.b, area)

def independent_life_map(GoBoard g, bint keep_territories=False, bint keep_stones=False,
                         bint multi_stone_suicide_legal=False):
    """area_independent_life: (rows of colour codes, white-minus-black region count)."""
    cdef Color area[MAX_ARR_SIZE]
    cdef int count = 0
    area_independent_life(&g.b, area, &count, keep_territories, keep_stones, multi_stone_suicide_legal)
    return _rows(&g.b, area), count

def non_pass_alive_self_connections(GoBoard g, int pla, bint multi_stone_suicide_legal=False):
    """Rows of booleans: area_is_non_pass_alive_self_connection for every point, using the
    pass-alive area with safe big territories (KataGo's usage)."""
    cdef Color area[MAX_ARR_SIZE]
    if pla != C_BLACK and pla != C_WHITE:
        raise ValueError(f"player must be 1 (black) or 2 (white), not {pla}")
    area_calculate(&g.b, area, False, True, False, multi_stone_suicide_legal)
    return [[bool(area_is_non_pass_alive_self_connection(&g.b, loc_of(x, y, g.b.x_size), <Color>pla, area))
             for x in range(g.b.x_size)] for y in range(g.b.y_size)]

def run_area_calculate(GoBoard g, int repeats, bint non_pass_alive_stones=True, bint safe_big_territories=True,
                       bint unsafe_big_territories=True, bint multi_stone_suicide_legal=False):
    """Call area_calculate repeats times without the GIL (benchmarks)."""
    cdef Color area[MAX_ARR_SIZE]
    cdef int i
    with nogil:
        for i in range(repeats):
            area_calculate(&g.b, area, non_pass_alive_stones, safe_big_territories,
                           unsafe_big_territories, multi_stone_suicide_legal)

def run_area_independent_life(GoBoard g, int repeats, bint keep_territories=False, bint keep_stones=True,
                              bint multi_stone_suicide_legal=False):
    """Call area_independent_life repeats times without the GIL (benchmarks)."""
    cdef Color area[MAX_ARR_SIZE]
    cdef int i, count = 0
    with nogil:
        for i in range(repeats):
            area_independent_life(&g.b, area, &count, keep_territories, keep_stones, multi_stone_suicide_legal)
    return count
