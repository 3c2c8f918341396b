# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Go board core: stones, chains with liberty counts, captures, simple ko, Zobrist hashing.

See board.pxd for the data layout and the glossary. Everything here is nogil;
the GoBoard class at the bottom is a thin Python view for tests and tools.
"""
from libc.string cimport memset, memcpy
from libc.stdint cimport uint32_t, uint64_t

# Zobrist tables. The stone, player, ko-point, encore, ko-mark, second-encore and size tables hold
# KataGo's own numbers (its Board::initHash: a Rand seeded from fixed strings), so a position's hash
# is KataGo's: showboard, debug_moves and the genmove log print the same HASH, and the situation hash
# and NN cache key built on them are KataGo's too (history.pyx, search_leaf.pyx). The auxiliary
# tables (the history's own ko-recapture bookkeeping) are katacli's, from a fixed splitmix64 seed.
cdef enum:
    NUM_AUX_TABLES = 1                  # the history's ko-recapture marks (history.pyx AUX_*)
    KATAGO_XORMULT_LEN = 16
    KATAGO_RAND_STATE_WORDS = 17        # the XorShift1024Mult words, then the PCG32 state

cdef uint64_t AUX_ZOBRIST_SEED = 0x6b617461636c6931ULL  # "katacli1"

cdef Hash128 _stone_hash[MAX_ARR_SIZE][4]
cdef Hash128 _player_hash[4]
cdef Hash128 _ko_hash[MAX_ARR_SIZE]
cdef Hash128 _encore_hash[3]
cdef Hash128 _ko_mark_hash[MAX_ARR_SIZE][4]
cdef Hash128 _second_encore_hash[MAX_ARR_SIZE][4]
cdef Hash128 _size_x_hash[MAX_LEN + 1]
cdef Hash128 _size_y_hash[MAX_LEN + 1]
cdef Hash128 _aux_hash[NUM_AUX_TABLES][MAX_ARR_SIZE][4]


cdef uint64_t _splitmix_state = AUX_ZOBRIST_SEED

cdef uint64_t _splitmix() noexcept nogil:
    global _splitmix_state
    _splitmix_state += 0x9E3779B97F4A7C15ULL
    cdef uint64_t z = _splitmix_state
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)

cdef Hash128 _rand_hash() noexcept nogil:
    cdef Hash128 h
    h.h0 = _splitmix()
    h.h1 = _splitmix()
    return h


# ---- KataGo's Rand (core/rand.h): PCG32 plus XorShift1024Mult, seeded from a string ----------
cdef struct KataGoRand:
    uint64_t xorm[KATAGO_XORMULT_LEN]
    int xorm_index
    uint64_t pcg

cdef inline uint32_t _katago_next_uint(KataGoRand* r) noexcept nogil:
    cdef uint64_t a0 = r.xorm[r.xorm_index], a1
    cdef uint32_t x
    cdef int rot
    r.xorm_index = (r.xorm_index + 1) & (KATAGO_XORMULT_LEN - 1)
    a1 = r.xorm[r.xorm_index]
    a1 ^= a1 << 31
    a1 ^= a1 >> 11
    a0 ^= a0 >> 30
    r.xorm[r.xorm_index] = a0 ^ a1
    r.pcg = r.pcg * 6364136223846793005ULL + 1442695040888963407ULL
    x = <uint32_t>(((r.pcg >> 18) ^ r.pcg) >> 27)
    rot = <int>(r.pcg >> 59)
    if rot != 0:
        x = (x >> rot) | (x << (32 - rot))
    return x + <uint32_t>((r.xorm[r.xorm_index] * 1181783497276652981ULL) >> 32)

cdef inline Hash128 _katago_hash(KataGoRand* r) noexcept nogil:
    cdef Hash128 h
    cdef uint64_t low
    low = _katago_next_uint(r)
    h.h0 = low | (<uint64_t>_katago_next_uint(r) << 32)
    low = _katago_next_uint(r)
    h.h1 = low | (<uint64_t>_katago_next_uint(r) << 32)
    return h

def katago_rand_state(seed: str) -> list:
    """KataGo's Rand::init(string): the 16 XorShift1024Mult words and the PCG32 state, drawn from
    SHA-256 digests of a counter and the seed (with the first word of its MD5)."""
    import hashlib
    md5_word = int.from_bytes(hashlib.md5(seed.encode()).digest()[:4], "little")
    text = f"|{md5_word}|{seed}"
    counter, words, state = 0, [], []
    while len(state) < KATAGO_RAND_STATE_WORDS:
        if not words:
            digest = hashlib.sha256((str(counter) + text).encode()).digest()
            counter += 37
            words = [int.from_bytes(digest[8 * i:8 * i + 8], "big") for i in range(4)]
        word = words.pop(0)
        if word != 0:
            state.append(word)
    return state

cdef void _katago_seed(KataGoRand* r, str seed):
    cdef int i
    state = katago_rand_state(seed)
    for i in range(KATAGO_XORMULT_LEN):
        r.xorm[i] = state[i]
    r.xorm_index = 0
    r.pcg = state[KATAGO_XORMULT_LEN]

cdef void _init_zobrist():
    """The tables in the order KataGo's Board::initHash draws them."""
    cdef KataGoRand r
    cdef int i, c, t
    cdef Hash128 zero
    zero.h0 = 0
    zero.h1 = 0
    _katago_seed(&r, "Board::initHash()")
    for c in range(4):
        _player_hash[c] = _katago_hash(&r)
    for i in range(3):
        _encore_hash[i] = _katago_hash(&r)
    for i in range(MAX_ARR_SIZE):
        for c in range(4):
            if c == C_EMPTY or c == C_WALL:
                _stone_hash[i][c] = zero       # empty points add nothing: a board's hash is its stones and size
                _ko_mark_hash[i][c] = zero
            else:
                _stone_hash[i][c] = _katago_hash(&r)
                _ko_mark_hash[i][c] = _katago_hash(&r)
        _ko_hash[i] = _katago_hash(&r)
    _katago_seed(&r, "Board::initHash() for ZOBRIST_SECOND_ENCORE_START hashes")
    for i in range(MAX_ARR_SIZE):
        for c in range(4):
            _second_encore_hash[i][c] = zero if c == C_EMPTY or c == C_WALL else _katago_hash(&r)
    _katago_seed(&r, "Board::initHash() for ZOBRIST_SIZE hashes")
    for i in range(MAX_LEN + 1):
        _size_x_hash[i] = _katago_hash(&r)
        _size_y_hash[i] = _katago_hash(&r)
    for t in range(NUM_AUX_TABLES):
        for i in range(MAX_ARR_SIZE):
            for c in range(4):
                _aux_hash[t][i][c] = _rand_hash()

_init_zobrist()

cdef Hash128 zobrist_stone(Loc loc, Color c) noexcept nogil:
    return _stone_hash[loc][c]

cdef Hash128 zobrist_player(Color pla) noexcept nogil:
    return _player_hash[pla]

cdef Hash128 zobrist_ko(Loc loc) noexcept nogil:
    return _ko_hash[loc]

cdef Hash128 zobrist_encore(int phase) noexcept nogil:
    return _encore_hash[phase]

cdef Hash128 zobrist_ko_mark(Loc loc, Color c) noexcept nogil:
    return _ko_mark_hash[loc][c]

cdef Hash128 zobrist_second_encore(Loc loc, Color c) noexcept nogil:
    return _second_encore_hash[loc][c]

cdef Hash128 zobrist_aux(int index, Loc loc, Color c) noexcept nogil:
    return _aux_hash[index][loc][c]

cdef inline void _hash_toggle(Board* b, Loc loc, Color c) noexcept nogil:
    b.pos_hash.h0 ^= _stone_hash[loc][c].h0
    b.pos_hash.h1 ^= _stone_hash[loc][c].h1


# ---- empty list ---------------------------------------------------------------
cdef inline void _empty_add(Board* b, Loc loc) noexcept nogil:
    b.empty_index[loc] = <short>b.num_empty
    b.empty_list[b.num_empty] = loc
    b.num_empty += 1

cdef inline void _empty_remove(Board* b, Loc loc) noexcept nogil:
    cdef int idx = b.empty_index[loc]
    cdef Loc last
    b.num_empty -= 1
    last = b.empty_list[b.num_empty]
    b.empty_list[idx] = last
    b.empty_index[last] = <short>idx
    b.empty_index[loc] = -1


# ---- construction -------------------------------------------------------------
cdef void board_init(Board* b, int x_size, int y_size) noexcept nogil:
    cdef int x, y, stride = x_size + 1
    memset(b, 0, sizeof(Board))
    b.x_size = x_size
    b.y_size = y_size
    for x in range(MAX_ARR_SIZE):
        b.colors[x] = C_WALL
        b.empty_index[x] = -1
    for y in range(y_size):
        for x in range(x_size):
            b.colors[loc_of(x, y, x_size)] = C_EMPTY
            _empty_add(b, loc_of(x, y, x_size))
    b.ko_loc = NULL_LOC
    b.adj_offsets[0] = -stride
    b.adj_offsets[1] = -1
    b.adj_offsets[2] = 1
    b.adj_offsets[3] = stride
    b.adj_offsets[4] = -stride - 1
    b.adj_offsets[5] = -stride + 1
    b.adj_offsets[6] = stride - 1
    b.adj_offsets[7] = stride + 1
    b.pos_hash = hash_xor(_size_x_hash[x_size], _size_y_hash[y_size])


cdef void _flood_chain(Board* b, Loc start, Loc* stack) noexcept nogil:
    """Label the chain containing start (whose chain_head is NULL_LOC) and count its liberties."""
    cdef Color c = b.colors[start]
    cdef int top = 0, i, n = 0, libs = 0
    cdef Loc cur, adj, tail = start
    cdef unsigned char seen[MAX_ARR_SIZE]
    memset(seen, 0, MAX_ARR_SIZE)
    b.chain_head[start] = start
    b.next_in_chain[start] = start
    stack[top] = start
    top = 1
    seen[start] = 1
    while top > 0:
        top -= 1
        cur = stack[top]
        n += 1
        for i in range(4):
            adj = cur + b.adj_offsets[i]
            if seen[adj]:
                continue
            if b.colors[adj] == c:
                seen[adj] = 1
                b.chain_head[adj] = start
                # splice adj into the circular list after tail
                b.next_in_chain[adj] = b.next_in_chain[tail]
                b.next_in_chain[tail] = adj
                tail = adj
                stack[top] = adj
                top += 1
            elif b.colors[adj] == C_EMPTY:
                seen[adj] = 1
                libs += 1
    b.chain_data[start].owner = c
    b.chain_data[start].num_locs = <short>n
    b.chain_data[start].num_liberties = <short>libs


cdef void board_regen_chains(Board* b) noexcept nogil:
    cdef int x, y
    cdef Loc loc
    cdef Color c
    cdef Loc stack[MAX_PLAY_SIZE]
    b.pos_hash = hash_xor(_size_x_hash[b.x_size], _size_y_hash[b.y_size])
    b.num_empty = 0
    for y in range(b.y_size):
        for x in range(b.x_size):
            loc = loc_of(x, y, b.x_size)
            c = b.colors[loc]
            b.empty_index[loc] = -1
            if c == C_BLACK or c == C_WHITE:
                _hash_toggle(b, loc, c)
                b.chain_head[loc] = NULL_LOC
            else:
                _empty_add(b, loc)
    for y in range(b.y_size):
        for x in range(b.x_size):
            loc = loc_of(x, y, b.x_size)
            c = b.colors[loc]
            if (c == C_BLACK or c == C_WHITE) and b.chain_head[loc] == NULL_LOC:
                _flood_chain(b, loc, stack)


# ---- queries ------------------------------------------------------------------
cdef bint board_is_on_board(const Board* b, Loc loc) noexcept nogil:
    return 0 <= loc < MAX_ARR_SIZE and b.colors[loc] != C_WALL

cdef int board_chain_size(const Board* b, Loc loc) noexcept nogil:
    return b.chain_data[b.chain_head[loc]].num_locs

cdef int board_num_immediate_liberties(const Board* b, Loc loc) noexcept nogil:
    cdef int n = 0, i
    for i in range(4):
        if b.colors[loc + b.adj_offsets[i]] == C_EMPTY:
            n += 1
    return n

cdef bint board_is_legal(const Board* b, Loc loc, Color pla, bint multi_stone_suicide_legal) noexcept nogil:
    if pla != C_BLACK and pla != C_WHITE:
        return False
    if loc == PASS_LOC:
        return True
    return (0 <= loc < MAX_ARR_SIZE and b.colors[loc] == C_EMPTY and loc != b.ko_loc
            and not board_is_illegal_suicide(b, loc, pla, multi_stone_suicide_legal))

cdef bint board_is_legal_ignoring_ko(const Board* b, Loc loc, Color pla, bint multi_stone_suicide_legal) noexcept nogil:
    if pla != C_BLACK and pla != C_WHITE:
        return False
    if loc == PASS_LOC:
        return True
    return (0 <= loc < MAX_ARR_SIZE and b.colors[loc] == C_EMPTY
            and not board_is_illegal_suicide(b, loc, pla, multi_stone_suicide_legal))

cdef bint board_would_be_capture(const Board* b, Loc loc, Color pla) noexcept nogil:
    cdef int i
    cdef Loc adj
    cdef Color opp = opp_of(pla)
    if b.colors[loc] != C_EMPTY:
        return False
    for i in range(4):
        adj = loc + b.adj_offsets[i]
        if b.colors[adj] == opp and b.chain_data[b.chain_head[adj]].num_liberties == 1:
            return True
    return False

cdef Loc board_ko_capture_loc(const Board* b, Loc loc, Color pla) noexcept nogil:
    """The single stone pla would capture as a ko by playing loc, or NULL_LOC.

    A ko capture: every neighbour is opponent or wall, and exactly one neighbour
    is a lone opponent stone in atari.
    """
    cdef int i
    cdef Loc adj, captured = NULL_LOC
    cdef Color c, opp = opp_of(pla)
    if b.colors[loc] != C_EMPTY:
        return NULL_LOC
    for i in range(4):
        adj = loc + b.adj_offsets[i]
        c = b.colors[adj]
        if c != C_WALL and c != opp:
            return NULL_LOC
        if c == opp and b.chain_data[b.chain_head[adj]].num_liberties == 1:
            if captured != NULL_LOC:
                return NULL_LOC
            if b.chain_data[b.chain_head[adj]].num_locs != 1:
                return NULL_LOC
            captured = adj
    return captured

cdef bint board_would_be_ko_capture(const Board* b, Loc loc, Color pla) noexcept nogil:
    return board_ko_capture_loc(b, loc, pla) != NULL_LOC

cdef bint board_is_simple_eye(const Board* b, Loc loc, Color pla) noexcept nogil:
    """Empty point surrounded by pla (or walls) with few enough opponent diagonals to be a real eye."""
    cdef int i, opp_corners = 0
    cdef bint against_wall = False
    cdef Color c, opp = opp_of(pla)
    if b.colors[loc] != C_EMPTY:
        return False
    for i in range(4):
        c = b.colors[loc + b.adj_offsets[i]]
        if c == C_WALL:
            against_wall = True
        elif c != pla:
            return False
    for i in range(4, 8):
        if b.colors[loc + b.adj_offsets[i]] == opp:
            opp_corners += 1
    return not (opp_corners >= 2 or (against_wall and opp_corners >= 1))

cdef bint board_is_adjacent_to_chain(const Board* b, Loc loc, Loc head) noexcept nogil:
    cdef int i
    cdef Loc adj
    cdef Color owner = b.colors[head]
    for i in range(4):
        adj = loc + b.adj_offsets[i]
        if b.colors[adj] == owner and b.chain_head[adj] == head:
            return True
    return False

cdef inline bint _contains(const Loc* arr, int n, Loc x) noexcept nogil:
    cdef int i
    for i in range(n):
        if arr[i] == x:
            return True
    return False

cdef int board_num_liberties_after_play(const Board* b, Loc loc, Color pla, int cap) noexcept nogil:
    """Liberties a stone played at loc would have (counting captures), or cap if at least cap."""
    cdef Color opp = opp_of(pla), c
    cdef Loc libs[MAX_PLAY_SIZE]
    cdef Loc captured[4]
    cdef Loc joined[4]
    cdef int n = 0, ncap = 0, njoin = 0, i, k
    cdef Loc adj, head, cur, lib
    for i in range(4):
        adj = loc + b.adj_offsets[i]
        c = b.colors[adj]
        if c == C_EMPTY:
            libs[n] = adj
            n += 1
            if n >= cap:
                return cap
        elif c == opp and b.chain_data[b.chain_head[adj]].num_liberties == 1:
            libs[n] = adj
            n += 1
            if n >= cap:
                return cap
            head = b.chain_head[adj]
            if not _contains(captured, ncap, head):
                captured[ncap] = head
                ncap += 1
    for i in range(4):
        adj = loc + b.adj_offsets[i]
        if b.colors[adj] != pla:
            continue
        head = b.chain_head[adj]
        if _contains(joined, njoin, head):
            continue
        joined[njoin] = head
        njoin += 1
        cur = adj
        while True:
            for k in range(4):
                lib = cur + b.adj_offsets[k]
                if lib == loc:
                    continue
                c = b.colors[lib]
                # A point is a liberty after the move if empty now or freed by a capture.
                if c == C_EMPTY or (c == opp and _contains(captured, ncap, b.chain_head[lib])):
                    if not _contains(libs, n, lib):
                        libs[n] = lib
                        n += 1
                        if n >= cap:
                            return cap
            cur = b.next_in_chain[cur]
            if cur == adj:
                break
    return n

cdef void board_bound_liberties_after_play(const Board* b, Loc loc, Color pla, int* lower, int* upper) noexcept nogil:
    """Cheap lower and upper bounds on board_num_liberties_after_play."""
    cdef Color opp = opp_of(pla), c
    cdef int i, immediate = 0, caps = 0, cap_stones = 0, conn = 0, max_conn = 0, libs
    cdef Loc adj
    for i in range(4):
        adj = loc + b.adj_offsets[i]
        c = b.colors[adj]
        if c == C_EMPTY:
            immediate += 1
        elif c == opp:
            if b.chain_data[b.chain_head[adj]].num_liberties == 1:
                caps += 1
                cap_stones += b.chain_data[b.chain_head[adj]].num_locs
        elif c == pla:
            libs = b.chain_data[b.chain_head[adj]].num_liberties - 1
            conn += libs
            if libs > max_conn:
                max_conn = libs
    lower[0] = caps + (max_conn if max_conn > immediate else immediate)
    upper[0] = immediate + cap_stones + conn

cdef int board_heuristic_connection_liberties_x2(const Board* b, Loc loc, Color pla) noexcept nogil:
    """Twice the sum over adjacent friendly chains with 2+ liberties of (liberties - 1.5)."""
    cdef int i, total = 0, libs
    cdef Loc adj
    for i in range(4):
        adj = loc + b.adj_offsets[i]
        if b.colors[adj] == pla:
            libs = b.chain_data[b.chain_head[adj]].num_liberties
            if libs > 1:
                total += 2 * libs - 3
    return total

cdef inline Hash128 _xor_chain_stones(const Board* b, Hash128 h, Loc start, Color c) noexcept nogil:
    """h with the stones of the chain at start (colour c) toggled: the hash once they are removed."""
    cdef Loc cur = start
    while True:
        h = hash_xor(h, _stone_hash[cur][c])
        cur = b.next_in_chain[cur]
        if cur == start:
            break
    return h

cdef Hash128 board_pos_hash_after_move(const Board* b, Loc loc, Color pla) noexcept nogil:
    cdef Hash128 h = b.pos_hash
    cdef Color opp = opp_of(pla), c
    cdef Loc heads[4]
    cdef int nheads = 0, i
    cdef bint suicide = True
    cdef Loc adj, head
    if loc == PASS_LOC:
        return h
    h = hash_xor(h, _stone_hash[loc][pla])
    for i in range(4):
        adj = loc + b.adj_offsets[i]
        c = b.colors[adj]
        if c == C_EMPTY:
            suicide = False
        elif c == pla:
            if b.chain_data[b.chain_head[adj]].num_liberties > 1:
                suicide = False
        elif c == opp and b.chain_data[b.chain_head[adj]].num_liberties == 1:
            suicide = False
            head = b.chain_head[adj]
            if not _contains(heads, nheads, head):
                heads[nheads] = head
                nheads += 1
                h = _xor_chain_stones(b, h, adj, opp)
    if suicide:
        for i in range(4):
            adj = loc + b.adj_offsets[i]
            if b.colors[adj] == pla:
                head = b.chain_head[adj]
                if not _contains(heads, nheads, head):
                    heads[nheads] = head
                    nheads += 1
                    h = _xor_chain_stones(b, h, adj, pla)
        h = hash_xor(h, _stone_hash[loc][pla])
    return h

cdef int board_find_liberties(const Board* b, Loc loc, Loc* out, int max_out) noexcept nogil:
    """Distinct liberties of the chain at loc, in chain-walk order; at most max_out written."""
    cdef int n = 0, i
    cdef Loc cur = loc, lib
    while True:
        for i in range(4):
            lib = cur + b.adj_offsets[i]
            if b.colors[lib] == C_EMPTY and not _contains(out, n, lib):
                if n >= max_out:
                    return n
                out[n] = lib
                n += 1
        cur = b.next_in_chain[cur]
        if cur == loc:
            break
    return n

cdef Hash128 board_sym_sit_hash_with_simple_ko(const Board* b, int sym, Color pla) noexcept nogil:
    cdef bint transpose = (sym & 4) != 0
    cdef int sym_x_size = b.y_size if transpose else b.x_size
    cdef int sym_y_size = b.x_size if transpose else b.y_size
    cdef int x, y
    cdef Loc loc, moved
    cdef Color c
    cdef Hash128 h = hash_xor(_size_x_hash[sym_x_size], _size_y_hash[sym_y_size])
    for y in range(b.y_size):
        for x in range(b.x_size):
            loc = loc_of(x, y, b.x_size)
            c = b.colors[loc]
            if c != C_BLACK and c != C_WHITE and loc != b.ko_loc:
                continue
            moved = sym_loc(x, y, b.x_size, b.y_size, sym)
            if c == C_BLACK or c == C_WHITE:
                h = hash_xor(h, _stone_hash[moved][c])
            if loc == b.ko_loc:
                h = hash_xor(h, zobrist_ko(moved))
    return hash_xor(h, _player_hash[pla])


cdef int board_num_stones(const Board* b) noexcept nogil:
    return b.x_size * b.y_size - b.num_empty


# ---- mutation -----------------------------------------------------------------
cdef int _remove_chain(Board* b, Loc loc) noexcept nogil:
    """Remove the chain at loc; give each neighbouring chain back its liberties. Returns stones removed."""
    cdef Color c = b.colors[loc]
    cdef int n = 0, i, j, nheads
    cdef Loc cur = loc, adj, head
    cdef Loc heads[4]
    while True:
        b.colors[cur] = C_EMPTY
        _hash_toggle(b, cur, c)
        _empty_add(b, cur)
        n += 1
        cur = b.next_in_chain[cur]
        if cur == loc:
            break
    # Each freed point is a new liberty of every distinct chain touching it.
    while True:
        nheads = 0
        for i in range(4):
            adj = cur + b.adj_offsets[i]
            if b.colors[adj] == C_BLACK or b.colors[adj] == C_WHITE:
                head = b.chain_head[adj]
                if not _contains(heads, nheads, head):
                    heads[nheads] = head
                    nheads += 1
                    b.chain_data[head].num_liberties += 1
        cur = b.next_in_chain[cur]
        if cur == loc:
            break
    return n

cdef void _splice_into(Board* b, Loc into_head, Loc other) noexcept nogil:
    """Merge the chain at other into the chain headed by into_head (lists and heads only)."""
    cdef Loc cur = other, tmp
    cdef Loc other_head = b.chain_head[other]
    while True:
        b.chain_head[cur] = into_head
        cur = b.next_in_chain[cur]
        if cur == other:
            break
    b.chain_data[into_head].num_locs += b.chain_data[other_head].num_locs
    tmp = b.next_in_chain[into_head]
    b.next_in_chain[into_head] = b.next_in_chain[other]
    b.next_in_chain[other] = tmp

cdef inline bint _is_liberty_of(const Board* b, Loc e, Loc head, Color pla) noexcept nogil:
    cdef int i
    cdef Loc adj
    for i in range(4):
        adj = e + b.adj_offsets[i]
        if b.colors[adj] == pla and b.chain_head[adj] == head:
            return True
    return False

cdef int _absorb_counting(Board* b, Loc into_head, Loc other, Color pla) noexcept nogil:
    """Merge the chain at other into into_head stone by stone; returns the liberties it adds."""
    cdef Loc cur = other, tmp, e
    cdef Loc other_head = b.chain_head[other]
    cdef int added = 0, i
    b.chain_data[into_head].num_locs += b.chain_data[other_head].num_locs
    while True:
        for i in range(4):
            e = cur + b.adj_offsets[i]
            if b.colors[e] == C_EMPTY and not _is_liberty_of(b, e, into_head, pla):
                added += 1
        # Relabel at once, so a point next to several absorbed stones counts once.
        b.chain_head[cur] = into_head
        cur = b.next_in_chain[cur]
        if cur == other:
            break
    tmp = b.next_in_chain[into_head]
    b.next_in_chain[into_head] = b.next_in_chain[other]
    b.next_in_chain[other] = tmp
    return added

cdef void board_play_assume_legal(Board* b, Loc loc, Color pla) noexcept nogil:
    cdef Color opp = opp_of(pla), c
    cdef Loc own_heads[4]
    cdef Loc opp_heads[4]
    cdef int n_own = 0, n_opp = 0, i, k, captured = 0, new_libs, suicided
    cdef Loc adj, head, big, e, possible_ko = NULL_LOC
    cdef bint touches
    if loc == PASS_LOC:
        b.ko_loc = NULL_LOC
        return
    for i in range(4):
        adj = loc + b.adj_offsets[i]
        c = b.colors[adj]
        if c == pla:
            head = b.chain_head[adj]
            if not _contains(own_heads, n_own, head):
                own_heads[n_own] = head
                n_own += 1
        elif c == opp:
            head = b.chain_head[adj]
            if not _contains(opp_heads, n_opp, head):
                opp_heads[n_opp] = head
                n_opp += 1

    # Liberties of the new stone's chain before captures.
    if n_own == 1:
        big = own_heads[0]
        new_libs = b.chain_data[big].num_liberties - 1
        for i in range(4):
            e = loc + b.adj_offsets[i]
            if b.colors[e] != C_EMPTY:
                continue
            touches = False
            for k in range(4):
                adj = e + b.adj_offsets[k]
                if b.colors[adj] == pla and b.chain_head[adj] == big:
                    touches = True
                    break
            if not touches:
                new_libs += 1
    else:
        new_libs = -1  # computed after the merge

    b.colors[loc] = pla
    _hash_toggle(b, loc, pla)
    _empty_remove(b, loc)
    b.chain_head[loc] = loc
    b.next_in_chain[loc] = loc
    b.chain_data[loc].owner = pla
    b.chain_data[loc].num_locs = 1

    if n_own == 0:
        b.chain_data[loc].num_liberties = <short>board_num_immediate_liberties(b, loc)
    else:
        big = own_heads[0]
        for i in range(1, n_own):
            if b.chain_data[own_heads[i]].num_locs > b.chain_data[big].num_locs:
                big = own_heads[i]
        if n_own == 1:
            _splice_into(b, big, loc)
            b.chain_data[big].num_liberties = <short>new_libs
        else:
            # loc was a liberty of big; absorbed stones add the empty points big did not touch yet.
            new_libs = b.chain_data[big].num_liberties - 1 + _absorb_counting(b, big, loc, pla)
            for i in range(n_own):
                if own_heads[i] != big:
                    new_libs += _absorb_counting(b, big, own_heads[i], pla)
            b.chain_data[big].num_liberties = <short>new_libs

    # The new stone takes one liberty from each distinct adjacent opponent chain.
    for i in range(n_opp):
        head = opp_heads[i]
        b.chain_data[head].num_liberties -= 1
        if b.chain_data[head].num_liberties == 0:
            captured += _remove_chain(b, head)
            possible_ko = head

    head = b.chain_head[loc]
    # Simple ko: exactly one stone captured by a lone stone that is left with one liberty.
    if captured == 1 and b.chain_data[head].num_locs == 1 and b.chain_data[head].num_liberties == 1:
        b.ko_loc = possible_ko
    else:
        b.ko_loc = NULL_LOC

    if pla == C_BLACK:
        b.num_white_captures += captured
    else:
        b.num_black_captures += captured

    if b.chain_data[head].num_liberties == 0:
        suicided = _remove_chain(b, head)
        if pla == C_BLACK:
            b.num_black_captures += suicided
        else:
            b.num_white_captures += suicided

cdef bint board_play(Board* b, Loc loc, Color pla, bint multi_stone_suicide_legal) noexcept nogil:
    if not board_is_legal(b, loc, pla, multi_stone_suicide_legal):
        return False
    board_play_assume_legal(b, loc, pla)
    return True

cdef bint board_set_stone(Board* b, Loc loc, Color color) noexcept nogil:
    cdef Color old
    cdef int x, y
    cdef Loc l
    if not board_is_on_board(b, loc):
        return False
    old = b.colors[loc]
    if old == color:
        b.ko_loc = NULL_LOC
        return True
    b.colors[loc] = color
    board_regen_chains(b)
    for y in range(b.y_size):
        for x in range(b.x_size):
            l = loc_of(x, y, b.x_size)
            if (b.colors[l] == C_BLACK or b.colors[l] == C_WHITE) and board_num_liberties(b, l) == 0:
                b.colors[loc] = old
                board_regen_chains(b)
                return False
    b.ko_loc = NULL_LOC
    return True


# ---- Python view --------------------------------------------------------------
_COLOR_CHARS = {C_EMPTY: ".", C_BLACK: "X", C_WHITE: "O"}


cdef class GoBoard:
    """A board you can poke from Python. Coordinates are (x, y) with y = 0 the top row.

    Validation happens here (this is the Python boundary): off-board points and
    bad colours raise ValueError rather than corrupting memory.
    """

    def __init__(self, int x_size=19, int y_size=-1):
        if y_size < 0:
            y_size = x_size
        if not (2 <= x_size <= MAX_LEN and 2 <= y_size <= MAX_LEN):
            raise ValueError(f"board size {x_size}x{y_size} is not supported (2..{MAX_LEN} per side)")
        board_init(&self.b, x_size, y_size)

    @property
    def x_size(self):
        return self.b.x_size

    @property
    def y_size(self):
        return self.b.y_size

    cdef Loc _loc(self, xy) except? -1:
        if xy is None:
            return PASS_LOC
        x, y = xy
        if not (0 <= x < self.b.x_size and 0 <= y < self.b.y_size):
            raise ValueError(f"point {xy} is off the {self.b.x_size}x{self.b.y_size} board")
        return loc_of(x, y, self.b.x_size)

    @staticmethod
    def _check_player(int pla):
        if pla != C_BLACK and pla != C_WHITE:
            raise ValueError(f"player must be 1 (black) or 2 (white), not {pla}")

    def loc(self, xy):
        """Internal Loc index of (x, y), or PASS_LOC for None."""
        return self._loc(xy)

    def color_at(self, xy):
        return self.b.colors[self._loc(xy)]

    def liberties_at(self, xy):
        cdef Loc l = self._loc(xy)
        if self.b.colors[l] != C_BLACK and self.b.colors[l] != C_WHITE:
            return 0
        return board_num_liberties(&self.b, l)

    def chain_size_at(self, xy):
        cdef Loc l = self._loc(xy)
        if self.b.colors[l] != C_BLACK and self.b.colors[l] != C_WHITE:
            return 0
        return board_chain_size(&self.b, l)

    @property
    def ko_point(self):
        if self.b.ko_loc == NULL_LOC:
            return None
        return (loc_x(self.b.ko_loc, self.b.x_size), loc_y(self.b.ko_loc, self.b.x_size))

    @property
    def pos_hash(self):
        return (<object>self.b.pos_hash.h1 << 64) | <object>self.b.pos_hash.h0

    @property
    def captures(self):
        """(black stones captured, white stones captured)."""
        return (self.b.num_black_captures, self.b.num_white_captures)

    def is_legal(self, xy, int pla, bint multi_stone_suicide_legal=False):
        GoBoard._check_player(pla)
        cdef Loc l = self._loc(xy)
        return board_is_legal(&self.b, l, pla, multi_stone_suicide_legal)

    def play(self, xy, int pla, bint multi_stone_suicide_legal=False):
        """Play a move; raises ValueError (board unchanged) when illegal on this board."""
        GoBoard._check_player(pla)
        cdef Loc l = self._loc(xy)
        if self.b.colors[l] != C_EMPTY and l != PASS_LOC:
            raise ValueError(f"point {xy} is occupied")
        if not board_play(&self.b, l, pla, multi_stone_suicide_legal):
            raise ValueError(f"illegal move at {xy} (ko or suicide)")

    def set_stone(self, xy, int color):
        if color not in (C_EMPTY, C_BLACK, C_WHITE):
            raise ValueError(f"color must be 0, 1 or 2, not {color}")
        if xy is None:
            raise ValueError("cannot place a stone on pass")
        if not board_set_stone(&self.b, self._loc(xy), color):
            raise ValueError(f"placing {color} at {xy} would leave a group without liberties")

    def copy(self):
        cdef GoBoard other = GoBoard.__new__(GoBoard)
        memcpy(&other.b, &self.b, sizeof(Board))
        return other

    def colors(self):
        """Rows top to bottom of colour codes."""
        return [[self.b.colors[loc_of(x, y, self.b.x_size)] for x in range(self.b.x_size)]
                for y in range(self.b.y_size)]

    def empty_points(self):
        return [(loc_x(self.b.empty_list[i], self.b.x_size), loc_y(self.b.empty_list[i], self.b.x_size))
                for i in range(self.b.num_empty)]

    def check_consistency(self):
        """Recompute chains, liberties, hash and empties from colours and compare (tests)."""
        cdef Board fresh
        cdef int x, y
        cdef Loc l
        memcpy(&fresh, &self.b, sizeof(Board))
        board_regen_chains(&fresh)
        if not hash_eq(fresh.pos_hash, self.b.pos_hash):
            raise AssertionError("pos_hash mismatch")
        if fresh.num_empty != self.b.num_empty:
            raise AssertionError("empty count mismatch")
        for y in range(self.b.y_size):
            for x in range(self.b.x_size):
                l = loc_of(x, y, self.b.x_size)
                if self.b.colors[l] == C_EMPTY:
                    if self.b.empty_list[self.b.empty_index[l]] != l:
                        raise AssertionError(f"empty list broken at {(x, y)}")
                elif self.b.colors[l] != C_WALL:
                    if board_num_liberties(&fresh, l) != board_num_liberties(&self.b, l):
                        raise AssertionError(f"liberty count mismatch at {(x, y)}")
                    if board_chain_size(&fresh, l) != board_chain_size(&self.b, l):
                        raise AssertionError(f"chain size mismatch at {(x, y)}")
                    if self.b.chain_data[self.b.chain_head[l]].owner != self.b.colors[l]:
                        raise AssertionError(f"chain owner mismatch at {(x, y)}")
        return True

    def __str__(self):
        return "\n".join("".join(_COLOR_CHARS[c] for c in row) for row in self.colors())

    @staticmethod
    def from_diagram(str diagram):
        """Build a board from rows of 'X' (black), 'O' (white), '.' (empty); spaces ignored."""
        rows = [r.replace(" ", "") for r in diagram.strip().splitlines() if r.strip()]
        y_size = len(rows)
        x_size = len(rows[0]) if rows else 0
        if any(len(r) != x_size for r in rows):
            raise ValueError("diagram rows have different lengths")
        cdef GoBoard g = GoBoard(x_size, y_size)
        cdef int x, y
        for y in range(y_size):
            for x in range(x_size):
                ch = rows[y][x]
                if ch in "Xx":
                    g.b.colors[loc_of(x, y, x_size)] = C_BLACK
                elif ch in "Oo":
                    g.b.colors[loc_of(x, y, x_size)] = C_WHITE
                elif ch not in ".+":
                    raise ValueError(f"bad diagram character {ch!r}")
        board_regen_chains(&g.b)
        for y in range(y_size):
            for x in range(x_size):
                l = loc_of(x, y, x_size)
                if g.b.colors[l] != C_EMPTY and board_num_liberties(&g.b, l) == 0:
                    raise ValueError(f"diagram has a group without liberties at {(x, y)}")
        return g


def core_constants() -> dict:
    """The core's numbers Python code needs (katacli._core.constants exports them)."""
    return {"EMPTY": C_EMPTY, "BLACK": C_BLACK, "WHITE": C_WHITE, "PASS_LOC": PASS_LOC,
            "MAX_BOARD_LEN": MAX_LEN, "NUM_SYMMETRIES": NUM_SYMMETRIES}
