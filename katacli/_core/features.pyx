# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""KataGo V7 input features from a History (see features.pxd for the plane list)."""
from libc.string cimport memset
from libc.math cimport floor

from katacli._core.board cimport (
    Board, Loc, Color, C_EMPTY, C_BLACK, C_WHITE, MAX_ARR_SIZE, NULL_LOC, PASS_LOC,
    loc_of, loc_x, loc_y, opp_of, board_num_liberties, board_is_illegal_suicide,
)
from katacli._core.rules cimport (
    KO_SIMPLE, KO_POSITIONAL, KO_SITUATIONAL, KO_SPIGHT, SCORING_AREA, SCORING_TERRITORY, TAX_NONE, TAX_SEKI, TAX_ALL,
)
from katacli._core.history cimport (
    History, history_is_legal, history_pass_would_end_game, history_pass_would_end_phase,
    history_should_suppress_end_game_from_friendly_pass, history_current_self_komi, history_recent_board,
    history_superko_banned,
)
from katacli._core.game_state cimport GameState
from katacli._core.area cimport area_calculate, area_independent_life
from katacli._core.ladder cimport (
    LadderCache, LadderWorkspace, ladder_workspace_new, ladder_workspace_free, ladder_features_cached,
    ladder_cache_workspace,
)

cdef enum:
    MAX_HISTORY_MOVES_SHOWN = 5
    F_ON_BOARD = 0
    F_PLA_STONE = 1
    F_OPP_STONE = 2
    F_LIBS_1 = 3
    F_KO_BAN = 6
    F_KO_RECAP_BLOCKED = 7
    F_PREV_MOVE_1 = 9
    F_LADDERED = 14
    F_LADDERED_PREV_1 = 15
    F_LADDERED_PREV_2 = 16
    F_LADDER_WORKING_MOVE = 17
    F_PLA_AREA = 18
    F_OPP_AREA = 19
    F_PLA_SECOND_ENCORE_STONE = 20
    F_OPP_SECOND_ENCORE_STONE = 21

# Komi is clipped to the board area plus this margin before scaling.
cdef float KOMI_CLIP_RADIUS = 20.0
cdef float KOMI_SCALE = 20.0


cdef void default_feature_params(FeatureParams* p) noexcept nogil:
    p.draw_equivalent_wins_for_white = 0.5
    p.conservative_pass_and_is_root = False
    p.enable_passing_hacks = False
    p.playout_doubling_advantage = 0.0
    p.max_history = 1000
    p.pass_alive_suicide_override = -1
    p.pos_map = NULL


cdef inline void _set(float* spatial, int channel, int plane_size, int pos, const int* pos_map) noexcept nogil:
    spatial[channel * plane_size + (pos_map[pos] if pos_map != NULL else pos)] = 1.0


cdef inline int _pos(Loc loc, int x_size, int nn_x_len) noexcept nogil:
    return loc_y(loc, x_size) * nn_x_len + loc_x(loc, x_size)


cdef float _komi_parity_wave(float self_komi, int x_size, int y_size) noexcept nogil:
    """Triangle wave peaking half a point above komis that allow a draw (KataGo's input 18)."""
    cdef bint drawable_komis_even = (x_size * y_size) % 2 == 0
    cdef float komi_floor, delta
    if drawable_komis_even:
        komi_floor = <float>floor(self_komi / 2.0) * 2.0
    else:
        komi_floor = <float>floor((self_komi - 1.0) / 2.0) * 2.0 + 1.0
    delta = self_komi - komi_floor
    if delta < 0.0:
        delta = 0.0
    if delta > 2.0:
        delta = 2.0
    if delta < 0.5:
        return delta
    if delta < 1.5:
        return 1.0 - delta
    return delta - 2.0


cdef void fill_features_v7(const History* h, Color pla, const FeatureParams* p,
                           int nn_x_len, int nn_y_len, float* spatial, float* global_,
                           LadderCache* ladder_cache) noexcept nogil:
    cdef const Board* b = &h.board
    cdef Color opp = opp_of(pla), stone
    cdef int x_size = b.x_size, y_size = b.y_size
    cdef int plane = nn_x_len * nn_y_len
    cdef int x, y, pos, libs, i, region_count = 0, tax_adjust_for_pla = 0, board_score_for_pla
    cdef int max_turns, num_turns_included = 0, history_len, usable
    cdef Loc loc, prev_loc
    cdef bint has_area = False, keep_territories = False, keep_stones = False
    cdef bint suicide_for_pass_alive, game_end_would_not_be_win = False, suppress_pass_ends_phase = False
    cdef float self_komi, area_size
    cdef Color area[MAX_ARR_SIZE]
    cdef unsigned char laddered[MAX_ARR_SIZE]
    cdef const unsigned char* banned
    cdef unsigned char working[MAX_ARR_SIZE]
    cdef const Board* prev_board
    cdef const Board* prev_prev_board
    cdef LadderWorkspace* ws
    cdef bint own_ws

    memset(spatial, 0, NUM_SPATIAL_FEATURES_V7 * plane * sizeof(float))
    memset(global_, 0, NUM_GLOBAL_FEATURES_V7 * sizeof(float))

    if p.pass_alive_suicide_override >= 0:
        suicide_for_pass_alive = h.rules.multi_stone_suicide_legal or p.pass_alive_suicide_override != 0
    else:
        suicide_for_pass_alive = h.rules.multi_stone_suicide_legal or h.always_pass_alive_under_suicide_rules

    # Stones and liberties.
    for y in range(y_size):
        for x in range(x_size):
            pos = y * nn_x_len + x
            loc = loc_of(x, y, x_size)
            _set(spatial, F_ON_BOARD, plane, pos, p.pos_map)
            stone = b.colors[loc]
            if stone == pla:
                _set(spatial, F_PLA_STONE, plane, pos, p.pos_map)
            elif stone == opp:
                _set(spatial, F_OPP_STONE, plane, pos, p.pos_map)
            if stone == pla or stone == opp:
                libs = board_num_liberties(b, loc)
                if 1 <= libs <= 3:
                    _set(spatial, F_LIBS_1 + libs - 1, plane, pos, p.pos_map)

    # Ko bans.
    banned = history_superko_banned(h)
    if h.encore_phase == 0:
        if b.ko_loc != NULL_LOC:
            _set(spatial, F_KO_BAN, plane, _pos(b.ko_loc, x_size, nn_x_len), p.pos_map)
        for y in range(y_size):
            for x in range(x_size):
                loc = loc_of(x, y, x_size)
                if banned[loc] and loc != b.ko_loc:
                    _set(spatial, F_KO_BAN, plane, y * nn_x_len + x, p.pos_map)
    else:
        for y in range(y_size):
            for x in range(x_size):
                loc = loc_of(x, y, x_size)
                if banned[loc]:
                    _set(spatial, F_KO_BAN, plane, y * nn_x_len + x, p.pos_map)
                if h.ko_recap_blocked[loc]:
                    _set(spatial, F_KO_RECAP_BLOCKED, plane, y * nn_x_len + x, p.pos_map)

    # Area: what would count for each side now; territory rules show it only once scoring is near.
    if h.rules.scoring_rule == SCORING_AREA and h.rules.tax_rule == TAX_NONE:
        has_area = True
        area_calculate(b, area, True, True, True, suicide_for_pass_alive)
    else:
        if h.rules.scoring_rule == SCORING_AREA:
            has_area = True
            keep_territories = False
            keep_stones = True
        elif h.encore_phase >= 2:
            has_area = True
            keep_territories = h.rules.tax_rule == TAX_NONE
            keep_stones = False
        if has_area:
            area_independent_life(b, area, &region_count, keep_territories, keep_stones, suicide_for_pass_alive)
            if h.rules.tax_rule == TAX_ALL:
                tax_adjust_for_pla = -2 * region_count if pla == C_WHITE else 2 * region_count

    if has_area:
        board_score_for_pla = tax_adjust_for_pla
        for y in range(y_size):
            for x in range(x_size):
                loc = loc_of(x, y, x_size)
                pos = y * nn_x_len + x
                if area[loc] == pla:
                    _set(spatial, F_PLA_AREA, plane, pos, p.pos_map)
                    board_score_for_pla += 1
                elif area[loc] == opp:
                    _set(spatial, F_OPP_AREA, plane, pos, p.pos_map)
                    board_score_for_pla -= 1
                elif h.rules.scoring_rule == SCORING_TERRITORY:
                    # Stones that survived from the start of the second encore count as owned.
                    if b.colors[loc] == pla and h.second_encore_start_colors[loc] == pla:
                        _set(spatial, F_PLA_AREA, plane, pos, p.pos_map)
                        board_score_for_pla += 1
                    elif b.colors[loc] == opp and h.second_encore_start_colors[loc] == opp:
                        _set(spatial, F_OPP_AREA, plane, pos, p.pos_map)
                        board_score_for_pla -= 1
        self_komi = history_current_self_komi(h, pla, p.draw_equivalent_wins_for_white)
        if board_score_for_pla + self_komi <= 0.0:
            game_end_would_not_be_win = True

    # How much move history to show: none if a pass would end the game but we act as if it won't.
    max_turns = MAX_HISTORY_MOVES_SHOWN
    if history_pass_would_end_game(h, pla) and (
            p.conservative_pass_and_is_root
            or history_should_suppress_end_game_from_friendly_pass(h, pla)
            or (p.enable_passing_hacks and game_end_would_not_be_win)):
        max_turns = 0
        suppress_pass_ends_phase = True
    elif h.is_game_finished or h.is_past_normal_phase_end:
        max_turns = 1
    if max_turns > p.max_history:
        max_turns = p.max_history

    # Previous moves, most recent first, only while they alternate pla/opp backwards.
    history_len = h.num_moves
    usable = max_turns if max_turns < h.num_approx_valid_turns_this_phase else h.num_approx_valid_turns_this_phase
    for i in range(usable):
        if h.moves[history_len - 1 - i].pla != (opp if i % 2 == 0 else pla):
            break
        num_turns_included = i + 1
        prev_loc = h.moves[history_len - 1 - i].loc
        if prev_loc == PASS_LOC:
            global_[G_PREV_PASS_1 + i] = 1.0
        elif prev_loc != NULL_LOC:
            _set(spatial, F_PREV_MOVE_1 + i, plane, _pos(prev_loc, x_size, nn_x_len), p.pos_map)

    # Ladders: now, one move ago and two moves ago.
    # A search tree lends its workspace (no allocation per leaf); otherwise one for this call.
    ws = ladder_cache_workspace(ladder_cache) if ladder_cache != NULL else NULL
    own_ws = ws == NULL
    if own_ws:
        ws = ladder_workspace_new()
    ladder_features_cached(b, opp, laddered, working, ws, ladder_cache)
    for y in range(y_size):
        for x in range(x_size):
            loc = loc_of(x, y, x_size)
            pos = y * nn_x_len + x
            if laddered[loc]:
                _set(spatial, F_LADDERED, plane, pos, p.pos_map)
            if working[loc]:
                _set(spatial, F_LADDER_WORKING_MOVE, plane, pos, p.pos_map)
    prev_board = b if num_turns_included < 1 else history_recent_board(h, 1)
    ladder_features_cached(prev_board, opp, laddered, NULL, ws, ladder_cache)
    for y in range(y_size):
        for x in range(x_size):
            if laddered[loc_of(x, y, x_size)]:
                _set(spatial, F_LADDERED_PREV_1, plane, y * nn_x_len + x, p.pos_map)
    prev_prev_board = prev_board if num_turns_included < 2 else history_recent_board(h, 2)
    ladder_features_cached(prev_prev_board, opp, laddered, NULL, ws, ladder_cache)
    for y in range(y_size):
        for x in range(x_size):
            if laddered[loc_of(x, y, x_size)]:
                _set(spatial, F_LADDERED_PREV_2, plane, y * nn_x_len + x, p.pos_map)
    if own_ws:
        ladder_workspace_free(ws)

    if h.encore_phase >= 2:
        for y in range(y_size):
            for x in range(x_size):
                loc = loc_of(x, y, x_size)
                pos = y * nn_x_len + x
                if h.second_encore_start_colors[loc] == pla:
                    _set(spatial, F_PLA_SECOND_ENCORE_STONE, plane, pos, p.pos_map)
                elif h.second_encore_start_colors[loc] == opp:
                    _set(spatial, F_OPP_SECOND_ENCORE_STONE, plane, pos, p.pos_map)

    # Globals.
    self_komi = history_current_self_komi(h, pla, p.draw_equivalent_wins_for_white)
    area_size = <float>(x_size * y_size)
    if self_komi > area_size + KOMI_CLIP_RADIUS:
        self_komi = area_size + KOMI_CLIP_RADIUS
    if self_komi < -area_size - KOMI_CLIP_RADIUS:
        self_komi = -area_size - KOMI_CLIP_RADIUS
    global_[G_SELF_KOMI] = self_komi / KOMI_SCALE

    if h.rules.ko_rule == KO_POSITIONAL or h.rules.ko_rule == KO_SPIGHT:
        global_[G_KO_NOT_SIMPLE] = 1.0
        global_[G_KO_KIND] = 0.5
    elif h.rules.ko_rule == KO_SITUATIONAL:
        global_[G_KO_NOT_SIMPLE] = 1.0
        global_[G_KO_KIND] = -0.5
    if h.rules.multi_stone_suicide_legal:
        global_[G_MULTI_STONE_SUICIDE] = 1.0
    if h.rules.scoring_rule == SCORING_TERRITORY:
        global_[G_TERRITORY] = 1.0
    if h.rules.tax_rule == TAX_SEKI:
        global_[G_TAX_SEKI] = 1.0
    elif h.rules.tax_rule == TAX_ALL:
        global_[G_TAX_SEKI] = 1.0
        global_[G_TAX_ALL] = 1.0
    if h.encore_phase > 0:
        global_[G_ENCORE_1] = 1.0
    if h.encore_phase > 1:
        global_[G_ENCORE_2] = 1.0
    if not suppress_pass_ends_phase and history_pass_would_end_phase(h, pla):
        global_[G_PASS_ENDS_PHASE] = 1.0
    if p.playout_doubling_advantage != 0.0:
        global_[G_PDA_ON] = 1.0
        global_[G_PDA] = <float>(0.5 * p.playout_doubling_advantage)
    if h.has_button:
        global_[G_BUTTON] = 1.0
    if h.rules.scoring_rule == SCORING_AREA or h.encore_phase >= 2:
        global_[G_KOMI_WAVE] = _komi_parity_wave(self_komi, x_size, y_size)


cdef inline bint _has_empty_neighbour(const Board* b, Loc loc) noexcept nogil:
    cdef int i
    for i in range(4):
        if b.colors[loc + b.adj_offsets[i]] == C_EMPTY:
            return True
    return False

cdef void fill_legal_mask(const History* h, Color pla, int nn_x_len, int nn_y_len, unsigned char* out) noexcept nogil:
    cdef const Board* b = &h.board
    cdef const unsigned char* banned
    cdef int x, y
    cdef Loc loc
    memset(out, 0, nn_x_len * nn_y_len + 1)
    if pla == h.presumed_next_pla and h.encore_phase == 0:
        # history_is_legal in the main phase, per point without the calls: empty, not the ko point,
        # not banned by superko (the bans brought up to date once), and not suicide (a point with
        # an empty neighbour never is).
        banned = history_superko_banned(h)
        for y in range(b.y_size):
            for x in range(b.x_size):
                loc = loc_of(x, y, b.x_size)
                if b.colors[loc] != C_EMPTY or loc == b.ko_loc or banned[loc]:
                    continue
                out[y * nn_x_len + x] = _has_empty_neighbour(b, loc) or not board_is_illegal_suicide(
                    b, loc, pla, h.rules.multi_stone_suicide_legal)
    else:
        for y in range(b.y_size):
            for x in range(b.x_size):
                out[y * nn_x_len + x] = history_is_legal(h, loc_of(x, y, b.x_size), pla)
    out[nn_x_len * nn_y_len] = history_is_legal(h, PASS_LOC, pla)


# ---- Python API ----------------------------------------------------------------
def encode_v7(GameState state, int next_player=0, float[:, :, ::1] spatial=None, float[::1] global_=None,
              unsigned char[::1] legal=None, double draw_equivalent_wins_for_white=0.5,
              bint conservative_pass_and_is_root=False, bint enable_passing_hacks=False,
              double playout_doubling_advantage=0.0, int max_history=1000, int pass_alive_suicide_override=-1,
              const int[::1] pos_map=None):
    """Fill V7 features (and optionally the legal-move mask) for state, as KataGo's NN input.

    spatial: float32 [22, H, W] with H >= y_size, W >= x_size; global_: float32 [19];
    legal: uint8 [H * W + 1]. next_player defaults to the player to move, and must
    be the player to move (KataGo evaluates only that player; change it with
    GameState.set_next_player first, which rebuilds ko bans). pos_map: int32 [H * W], where each point's
    features go (a board symmetry applied while filling, as a search tree does; see
    katacli.nn.symmetry.symmetry_pos_maps); None: in place.
    """
    cdef FeatureParams p
    cdef Color pla = <Color>(next_player or state.h.presumed_next_pla)
    if pla != state.h.presumed_next_pla:
        raise ValueError("features can only be computed for the player to move")
    if spatial is None or global_ is None:
        raise ValueError("spatial and global_ output arrays are required")
    if spatial.shape[0] != NUM_SPATIAL_FEATURES_V7 or global_.shape[0] != NUM_GLOBAL_FEATURES_V7:
        raise ValueError("spatial must be [22, H, W] and global_ [19]")
    if spatial.shape[1] < state.h.board.y_size or spatial.shape[2] < state.h.board.x_size:
        raise ValueError("feature planes are smaller than the board")
    if legal is not None and legal.shape[0] != spatial.shape[1] * spatial.shape[2] + 1:
        raise ValueError("legal mask must have H * W + 1 entries")
    default_feature_params(&p)
    p.draw_equivalent_wins_for_white = draw_equivalent_wins_for_white
    p.conservative_pass_and_is_root = conservative_pass_and_is_root
    p.enable_passing_hacks = enable_passing_hacks
    p.playout_doubling_advantage = playout_doubling_advantage
    p.max_history = max_history
    p.pass_alive_suicide_override = pass_alive_suicide_override
    cdef int nn_y = spatial.shape[1], nn_x = spatial.shape[2]
    if pos_map is not None:
        if pos_map.shape[0] != nn_x * nn_y or not all(0 <= v < nn_x * nn_y for v in pos_map):
            raise ValueError("pos_map must give a plane index for each of the H * W points")
        p.pos_map = &pos_map[0]
    with nogil:
        fill_features_v7(&state.h, pla, &p, nn_x, nn_y, &spatial[0, 0, 0], &global_[0], NULL)
        if legal is not None:
            fill_legal_mask(&state.h, pla, nn_x, nn_y, &legal[0])
