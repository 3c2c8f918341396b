# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Anti-mirror play (contract: search_mirror.pxd). The constants are KataGo's (searchmirror.cpp)."""
from libc.math cimport sqrt, tanh, atanh

from katacli._core.board cimport (
    Board, Loc, Color, C_EMPTY, C_BLACK, C_WHITE, PASS_LOC, NULL_LOC, loc_of, loc_x, loc_y, opp_of,
    board_num_liberties, board_is_adjacent_to_chain,
)
from katacli._core.rules cimport SCORING_AREA, WHB_N, WHB_N_MINUS_ONE
from katacli._core.history cimport History, history_compute_num_handicap_stones
from katacli._core.search_nodes cimport TreeCore, Node, DirectEval, edge_of_move

# Detection: mirrored moves needed (base + share of all the opponent's moves), recent-share threshold, decay.
cdef double DETECT_MIN_MIRRORS = 7.0
cdef double DETECT_MIN_SHARE = 0.5
cdef double DETECT_RECENT_SHARE = 0.45
cdef double DETECT_DECAY = 0.75
# Centre symmetry is measured within this radius of the centre, on boards at least this large.
cdef int SYMMETRY_RADIUS = 3
cdef int SYMMETRY_MIN_BOARD = 7
cdef double SYMMETRY_UNMATCHED_WEIGHT = 0.2
# The mirroring side is "difficult" to beat when it holds the centre and its advantage is at least this.
cdef double DIFFICULT_MIN_ADVANTAGE = -0.5
# Recent moves a leaf may deviate from the mirror and still get the centre-ownership shift.
cdef int HACK_SKIP_RECENT = 4
cdef double HACK_OWNERSHIP_SCALE_SYMMETRIC = 0.7
cdef double HACK_OWNERSHIP_SCALE = 0.3
# Policy: weight moved onto the mirror answer, central and near-central moves, moves touching the centre.
cdef double POLICY_MIRROR = 1.0
cdef double POLICY_MIRROR_DIFFICULT_FACTOR = 3.0
cdef double POLICY_CENTRAL = 0.3
cdef double POLICY_NEAR_CENTRAL = 0.05
cdef double POLICY_NEAR_CENTER_STONE = 0.05
cdef double POLICY_CLOSE_CENTER_STONE = 0.03
# Forced exploration: huge utility that sends playouts down a move, and the smaller biases.
cdef double FORCE_UTILITY = 100.0
cdef double BIAS_UTILITY = 0.18
cdef double STRONG_BIAS_UTILITY = 0.36
cdef double CENTER_ATTACH_UTILITY = 0.75
cdef double MAX_USEFUL_UTILITY_LOSS = 0.03


# ---- geometry (KataGo's Location helpers) -----------------------------------------------------------
cdef inline Loc _mirror_loc(Loc loc, int x_size, int y_size) noexcept nogil:
    if loc == NULL_LOC or loc == PASS_LOC:
        return loc
    return loc_of(x_size - 1 - loc_x(loc, x_size), y_size - 1 - loc_y(loc, x_size), x_size)


cdef inline Loc _center_loc(int x_size, int y_size) noexcept nogil:
    if x_size % 2 == 0 or y_size % 2 == 0:
        return NULL_LOC
    return loc_of(x_size // 2, y_size // 2, x_size)


cdef inline bint _is_central(Loc loc, int x_size, int y_size) noexcept nogil:
    cdef int x = loc_x(loc, x_size), y = loc_y(loc, x_size)
    return (x_size - 1) // 2 <= x <= x_size // 2 and (y_size - 1) // 2 <= y <= y_size // 2


cdef inline bint _is_near_central(Loc loc, int x_size, int y_size) noexcept nogil:
    cdef int x = loc_x(loc, x_size), y = loc_y(loc, x_size)
    return (x_size - 1) // 2 - 1 <= x <= x_size // 2 + 1 and (y_size - 1) // 2 - 1 <= y <= y_size // 2 + 1


cdef inline int _distance_sq(Loc a, Loc b, int x_size) noexcept nogil:
    cdef int dx = loc_x(b, x_size) - loc_x(a, x_size), dy = loc_y(b, x_size) - loc_y(a, x_size)
    return dx * dx + dy * dy


cdef inline bint _touches_center_chain(const Board* b, Loc move, Loc center) noexcept nogil:
    if b.colors[center] != C_BLACK and b.colors[center] != C_WHITE:
        return False
    return board_is_adjacent_to_chain(b, move, b.chain_head[center])


cdef inline double _damping(double parent_utility) noexcept nogil:
    cdef double v = 1.0 - 0.7 * parent_utility * parent_utility
    return v if v > 0.3 else 0.3


# ---- detection ---------------------------------------------------------------------------------
cdef bint mirror_update(TreeCore* t) noexcept nogil:
    cdef const History* h = &t.root_hist
    cdef const Board* b = &h.board
    cdef Color root_pla = h.presumed_next_pla, old = t.mirroring_pla, c0, c1
    cdef int i, mirrors = 0, total = 0, handicap, dx, dy, unmatched = 0, half_x, half_y
    cdef double mirror_ewms = 0.0, total_ewms = 0.0, black_extra = 0.0, err
    cdef bint last_was_mirror = False, black_gets_last_move
    cdef Loc loc, mloc
    t.mirroring_pla = C_EMPTY
    t.mirror_advantage = 0.0
    t.mirror_center_symmetry_error = 1e10
    if not t.anti_mirror or not t.has_root_hist:
        return old != t.mirroring_pla
    for i in range(1, h.num_moves):
        if h.moves[i].pla == root_pla:
            continue
        last_was_mirror = False
        if h.moves[i].loc == _mirror_loc(h.moves[i - 1].loc, b.x_size, b.y_size):
            mirrors += 1
            mirror_ewms += 1.0
            last_was_mirror = True
        total += 1
        total_ewms += 1.0
        mirror_ewms *= DETECT_DECAY
        total_ewms *= DETECT_DECAY
    if (mirrors >= DETECT_MIN_MIRRORS + DETECT_MIN_SHARE * total and mirror_ewms >= DETECT_RECENT_SHARE * total_ewms
            and last_was_mirror):
        t.mirroring_pla = opp_of(root_pla)
        handicap = history_compute_num_handicap_stones(h)
        if h.rules.scoring_rule == SCORING_AREA:
            if handicap > 0:
                black_extra += handicap - 1
            black_gets_last_move = (b.x_size % 2 == 1 and b.y_size % 2 == 1) == (handicap == 0 or handicap % 2 == 1)
            if black_gets_last_move:
                black_extra += 1.0
        if handicap > 0 and h.rules.white_handicap_bonus_rule == WHB_N:
            black_extra -= handicap
        if handicap > 0 and h.rules.white_handicap_bonus_rule == WHB_N_MINUS_ONE:
            black_extra -= handicap - 1
        t.mirror_advantage = (black_extra - h.rules.komi if t.mirroring_pla == C_BLACK
                              else h.rules.komi - black_extra)
    if b.x_size >= SYMMETRY_MIN_BOARD and b.y_size >= SYMMETRY_MIN_BOARD:
        err = 0.0
        half_x = b.x_size // 2
        half_y = b.y_size // 2
        for dy in range(-SYMMETRY_RADIUS, SYMMETRY_RADIUS + 1):
            for dx in range(-SYMMETRY_RADIUS, SYMMETRY_RADIUS + 1):
                loc = loc_of(half_x + dx, half_y + dy, b.x_size)
                mloc = _mirror_loc(loc, b.x_size, b.y_size)
                if loc == mloc:
                    continue
                c0 = b.colors[loc]
                c1 = b.colors[mloc]
                if c0 == opp_of(t.mirroring_pla) and c1 != t.mirroring_pla:
                    err += 1.0
                if c0 == t.mirroring_pla and c1 == C_EMPTY:
                    unmatched += 1
        if err > 0.0:
            err += SYMMETRY_UNMATCHED_WEIGHT * unmatched
        if err >= 1.0:
            err = 0.5 * err * (1.0 + err)
        t.mirror_center_symmetry_error = err
    return old != t.mirroring_pla


cdef bint mirroring_since_root(const TreeCore* t, const History* h, int skip_recent) noexcept nogil:
    cdef int i = t.root_hist.num_moves + 1
    cdef int x_size = h.board.x_size, y_size = h.board.y_size
    while i + skip_recent < h.num_moves:
        if h.moves[i].loc != _mirror_loc(h.moves[i - 1].loc, x_size, y_size):
            return False
        i += 2
    return True


cdef bint anti_mirror_active(const TreeCore* t, const History* h) noexcept nogil:
    return t.anti_mirror and t.mirroring_pla != C_EMPTY and mirroring_since_root(t, h, 0)


cdef inline bint _difficult(const TreeCore* t, const Board* b, Loc center) noexcept nogil:
    return center != NULL_LOC and b.colors[center] == t.mirroring_pla and t.mirror_advantage >= DIFFICULT_MIN_ADVANTAGE


# ---- selection ---------------------------------------------------------------------------------
cdef Loc anti_mirror_target(const TreeCore* t, const Node* n, const History* h) noexcept nogil:
    cdef Loc prev, target
    if n.next_pla != opp_of(t.root_hist.presumed_next_pla) or h.num_moves <= 0:
        return NULL_LOC
    prev = h.moves[h.num_moves - 1].loc
    if prev == PASS_LOC:
        return NULL_LOC
    target = _mirror_loc(prev, h.board.x_size, h.board.y_size)
    if edge_of_move(t, n, target) >= 0:
        return target
    return PASS_LOC   # the mirror point is illegal: mirroring means passing


cdef double anti_mirror_policy(const TreeCore* t, double prior, Loc move, Color move_pla, Loc target,
                               const History* h) noexcept nogil:
    """The prior with weight moved onto the mirror answer (opponent) or central moves (us), fading with depth."""
    cdef int x_size = h.board.x_size, y_size = h.board.y_size, dist
    cdef Loc center = _center_loc(x_size, y_size)
    cdef double weight = 0.0
    cdef float p = <float>prior
    if move_pla == opp_of(t.root_hist.presumed_next_pla):
        if target != NULL_LOC and move == target:
            weight = POLICY_MIRROR
            if _difficult(t, &h.board, center):
                weight *= POLICY_MIRROR_DIFFICULT_FACTOR
    elif move != PASS_LOC:
        if _is_central(move, x_size, y_size):
            weight = POLICY_CENTRAL
        else:
            if _is_near_central(move, x_size, y_size):
                weight = POLICY_NEAR_CENTRAL
            if center != NULL_LOC and t.root_hist.board.colors[center] == opp_of(move_pla):
                if _touches_center_chain(&h.board, move, center):
                    weight = POLICY_NEAR_CENTER_STONE
                else:
                    dist = _distance_sq(move, center, x_size)
                    if dist <= 2:
                        weight = POLICY_NEAR_CENTER_STONE
                    elif dist <= 4:
                        weight = POLICY_CLOSE_CENTER_STONE
    if weight > 0.0:
        weight = weight / (1.0 + sqrt(<double>(h.num_moves - t.root_hist.num_moves)))
        p = p + (1.0 - p) * <float>weight
    return p


cdef double anti_mirror_forced_explore(const TreeCore* t, double child_utility, double parent_utility, Loc move,
                                       Color move_pla, Loc target, double child_weight, double total_child_weight,
                                       const History* h, bint is_root) noexcept nogil:
    """The child's utility with the pushes that send playouts down the mirror answer and towards the centre."""
    cdef const Board* b = &h.board
    cdef int x_size = b.x_size, y_size = b.y_size, dist, libs
    cdef Loc center = _center_loc(x_size, y_size), prev
    cdef bint difficult = _difficult(t, b, center)
    cdef double sign = 1.0 if move_pla == C_WHITE else -1.0   # utility is White's: push towards the mover
    cdef double sym_err = t.mirror_center_symmetry_error
    cdef double dump = 0.0, bias = 0.0, loss
    if move_pla == t.mirroring_pla:
        if target == NULL_LOC or move != target:
            return child_utility
        if difficult:
            dump = 0.20
            if target != PASS_LOC:
                dump = max(dump, 1.0 / (0.75 + 0.5 * sqrt(<double>_distance_sq(center, target, x_size)))
                           / max(1.0, sym_err))
            bias = 0.75
        elif t.mirror_advantage >= 5.0:
            dump = 0.15
            bias = 0.50
        elif t.mirror_advantage >= -5.0:
            dump = 0.10 + t.mirror_advantage
            bias = 0.30 + t.mirror_advantage * 4
        else:
            dump = 0.05
            bias = 0.10
        if target == PASS_LOC:
            dump *= 0.35 if move == center else 0.35 / max(1.0, sqrt(sym_err))
        if sym_err >= 1.0:
            dump /= sym_err
            bias /= sym_err
        if child_weight < dump * total_child_weight:
            child_utility += sign * FORCE_UTILITY
        if child_weight < bias * total_child_weight:
            child_utility += sign * BIAS_UTILITY * _damping(parent_utility)
        if child_weight < 0.5 * bias * total_child_weight:
            child_utility += sign * STRONG_BIAS_UTILITY * _damping(parent_utility)
        return child_utility
    if move_pla != opp_of(t.mirroring_pla) or move == PASS_LOC:
        return child_utility
    if difficult:
        if _touches_center_chain(b, move, center):
            libs = board_num_liberties(b, center)
            child_utility += (sign * CENTER_ATTACH_UTILITY / (1.0 + libs) / max(1.0, sym_err)
                              * _damping(parent_utility))
            dump = 0.10 / libs
        dist = _distance_sq(move, center, x_size)
        if dist <= 2:
            dump = max(dump, 0.010)
        elif dist <= 4:
            dump = max(dump, 0.005)
    if move == center:
        dump = 0.06 if is_root else 0.12
    loss = parent_utility - child_utility if move_pla == C_WHITE else child_utility - parent_utility
    if loss > 0.0 and loss * dump > MAX_USEFUL_UTILITY_LOSS:
        dump += 0.5 * (MAX_USEFUL_UTILITY_LOSS / loss - dump)
    if h.num_moves > 0 and center != NULL_LOC:
        prev = h.moves[h.num_moves - 1].loc
        if prev != NULL_LOC and prev != PASS_LOC:
            dist = _distance_sq(center, prev, x_size)
            if dist <= 16:
                dump *= 0.900
            if dist <= 5:
                dump *= 0.825
            if dist <= 2:
                dump *= 0.750
    if child_weight < dump * total_child_weight:
        child_utility += sign * FORCE_UTILITY
    return child_utility


# ---- evaluation --------------------------------------------------------------------------------
cdef bint mirror_eval_difficult(const TreeCore* t, const History* h) noexcept nogil:
    cdef Loc center = _center_loc(h.board.x_size, h.board.y_size)
    return (t.anti_mirror and t.mirroring_pla != C_EMPTY and t.mirror_advantage >= DIFFICULT_MIN_ADVANTAGE
            and center != NULL_LOC and h.board.colors[center] == opp_of(t.root_hist.presumed_next_pla)
            and mirroring_since_root(t, h, HACK_SKIP_RECENT))


cdef void mirror_hack_eval(const TreeCore* t, DirectEval* ev, double white_center_ownership) noexcept nogil:
    """Shift win/loss by the network's ownership of the centre: holding it decides a mirrored game."""
    cdef double total = ev.win + ev.loss
    cdef double scale = HACK_OWNERSHIP_SCALE_SYMMETRIC if t.mirror_center_symmetry_error <= 0.0 else HACK_OWNERSHIP_SCALE
    cdef double wl = (ev.win - ev.loss) / (total + 1e-10), new_win
    if wl < -1.0 + 1e-15:
        wl = -1.0 + 1e-15
    if wl > 1.0 - 1e-15:
        wl = 1.0 - 1e-15
    wl = tanh(atanh(wl) + scale * white_center_ownership)
    new_win = total * (0.5 + 0.5 * wl)
    ev.win = <float>new_win
    ev.loss = <float>(total - new_win)
