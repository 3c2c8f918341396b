# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Game history with KataGo's rules semantics (see history.pxd for the glossary).

The C functions are nogil so the search can replay moves on private copies.
Python reaches a History through game_state.GameState, which validates points and colours.
"""
from libc.stdlib cimport malloc, realloc, free
from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memset, memcpy

from katacli._core.board cimport (
    Board, Loc, Color, Hash128, C_EMPTY, C_BLACK, C_WHITE, MAX_ARR_SIZE,
    NULL_LOC, PASS_LOC, loc_of, opp_of, hash_eq, hash_xor,
    zobrist_player, zobrist_ko, zobrist_aux, zobrist_encore, zobrist_ko_mark, zobrist_second_encore,
    board_is_on_board, board_is_legal_ignoring_ko, board_is_suicide, board_is_illegal_suicide,
    board_ko_capture_loc, board_chain_size, board_num_liberties, board_play_assume_legal,
    board_pos_hash_after_move,
)
from katacli._core.rules cimport (
    Rules, KO_SIMPLE, KO_SITUATIONAL, KO_SPIGHT, SCORING_AREA, SCORING_TERRITORY,
    TAX_NONE, TAX_ALL, WHB_ZERO, WHB_N, rules_game_result_will_be_integer,
)
from katacli._core.area cimport area_calculate, area_independent_life
from katacli._core.katago_hash cimport (
    murmur_mix, basic_lcong, ko_rule_hash, scoring_rule_hash, tax_rule_hash, multi_stone_suicide_hash, button_hash,
    friendly_pass_ok_hash,
)

# Auxiliary Zobrist tables from board.pyx, by purpose (the situation hash uses KataGo's own tables).
cdef enum:
    AUX_KO_RECAP_MARK = 0       # ko-recapture-blocked points in the encore, in the history's ko hashes

cdef enum:
    NO_RESULT_REPETITIONS = 3   # a position recurring this often ends a simple-ko/encore game with no result
    INITIAL_LIST_CAPACITY = 64


# ---- small growable lists -----------------------------------------------------
cdef void _hashlist_init(HashList* l) noexcept nogil:
    l.items = NULL
    l.size = 0
    l.capacity = 0

cdef void _hashlist_push(HashList* l, Hash128 h) noexcept nogil:
    cdef int cap
    if l.size >= l.capacity:
        cap = l.capacity * 2 if l.capacity > 0 else INITIAL_LIST_CAPACITY
        l.items = <Hash128*>realloc(l.items, cap * sizeof(Hash128))
        l.capacity = cap
    l.items[l.size] = h
    l.size += 1

cdef bint _hashlist_contains(const HashList* l, Hash128 h) noexcept nogil:
    cdef int i
    for i in range(l.size):
        if hash_eq(l.items[i], h):
            return True
    return False

cdef int _hashlist_count(const HashList* l, Hash128 h) noexcept nogil:
    cdef int i, n = 0
    for i in range(l.size):
        if hash_eq(l.items[i], h):
            n += 1
    return n

cdef void _hashlist_copy(HashList* dst, const HashList* src) noexcept nogil:
    dst.size = src.size
    dst.capacity = src.size if src.size > 0 else 0
    dst.items = NULL
    if src.size > 0:
        dst.items = <Hash128*>malloc(src.size * sizeof(Hash128))
        memcpy(dst.items, src.items, src.size * sizeof(Hash128))


# ---- hashes -------------------------------------------------------------------
cdef Hash128 _ko_hash(const Rules* rules, const Board* b, Color pla, int encore_phase, Hash128 recap_hash) noexcept nogil:
    """What superko compares; the player to move counts under situational and simple ko and in the encore."""
    cdef Hash128 h = hash_xor(b.pos_hash, recap_hash)
    if rules.ko_rule == KO_SITUATIONAL or rules.ko_rule == KO_SIMPLE or encore_phase > 0:
        h = hash_xor(h, zobrist_player(pla))
    return h

cdef Hash128 _ko_hash_after_move_main_phase(const Rules* rules, Hash128 pos_hash_after, Color next_pla) noexcept nogil:
    if rules.ko_rule == KO_SITUATIONAL or rules.ko_rule == KO_SIMPLE:
        return hash_xor(pos_hash_after, zobrist_player(next_pla))
    return pos_hash_after


# ---- lifecycle ----------------------------------------------------------------
cdef void history_init(History* h, const Board* board, Color pla, const Rules* rules, int encore_phase) noexcept nogil:
    memset(h, 0, sizeof(History))
    _hashlist_init(&h.ko_hashes)
    _hashlist_init(&h.hashes_before_black_pass)
    _hashlist_init(&h.hashes_before_white_pass)
    history_clear(h, board, pla, rules, encore_phase)

cdef void history_free(History* h) noexcept nogil:
    free(h.moves)
    free(h.ko_hashes.items)
    free(h.hashes_before_black_pass.items)
    free(h.hashes_before_white_pass.items)
    free(h.encore_ko_captures)
    h.moves = NULL
    h.ko_hashes.items = NULL
    h.hashes_before_black_pass.items = NULL
    h.hashes_before_white_pass.items = NULL
    h.encore_ko_captures = NULL
    h.num_moves = h.moves_capacity = 0
    h.ko_hashes.size = h.ko_hashes.capacity = 0
    h.hashes_before_black_pass.size = h.hashes_before_black_pass.capacity = 0
    h.hashes_before_white_pass.size = h.hashes_before_white_pass.capacity = 0
    h.num_encore_ko_captures = h.encore_ko_captures_capacity = 0

cdef void history_copy(History* dst, const History* src) noexcept nogil:
    memcpy(dst, src, sizeof(History))
    dst.moves = NULL
    dst.moves_capacity = src.num_moves
    if src.num_moves > 0:
        dst.moves = <Move*>malloc(src.num_moves * sizeof(Move))
        memcpy(dst.moves, src.moves, src.num_moves * sizeof(Move))
    _hashlist_copy(&dst.ko_hashes, &src.ko_hashes)
    _hashlist_copy(&dst.hashes_before_black_pass, &src.hashes_before_black_pass)
    _hashlist_copy(&dst.hashes_before_white_pass, &src.hashes_before_white_pass)
    dst.encore_ko_captures = NULL
    dst.encore_ko_captures_capacity = src.num_encore_ko_captures
    if src.num_encore_ko_captures > 0:
        dst.encore_ko_captures = <EncoreKoCapture*>malloc(src.num_encore_ko_captures * sizeof(EncoreKoCapture))
        memcpy(dst.encore_ko_captures, src.encore_ko_captures, src.num_encore_ko_captures * sizeof(EncoreKoCapture))

cdef void _hashlist_restore(HashList* dst, const HashList* src) noexcept nogil:
    """dst's items become src's, in dst's own buffer when it is large enough."""
    if dst.capacity < src.size:
        free(dst.items)
        dst.items = <Hash128*>malloc(src.size * sizeof(Hash128))
        dst.capacity = src.size
    if src.size > 0:
        memcpy(dst.items, src.items, src.size * sizeof(Hash128))
    dst.size = src.size

cdef void history_restore(History* dst, const History* src) noexcept nogil:
    cdef int played = dst.num_moves - src.num_moves, i
    cdef Move* moves = dst.moves
    cdef int moves_capacity = dst.moves_capacity
    cdef HashList ko_hashes = dst.ko_hashes
    cdef HashList before_black_pass = dst.hashes_before_black_pass
    cdef HashList before_white_pass = dst.hashes_before_white_pass
    cdef EncoreKoCapture* captures = dst.encore_ko_captures
    cdef int captures_capacity = dst.encore_ko_captures_capacity
    # Everything before initial_board (the struct's last fields) in one piece, then dst's own buffers back.
    memcpy(dst, src, <size_t>(<const char*>&src.initial_board - <const char*>src))
    # Moves are only ever appended: dst's first src.num_moves are src's already.
    dst.moves = moves
    dst.moves_capacity = moves_capacity
    # The hash lists may have been emptied (button, spight-like ending, encore) and refilled.
    dst.ko_hashes = ko_hashes
    dst.hashes_before_black_pass = before_black_pass
    dst.hashes_before_white_pass = before_white_pass
    _hashlist_restore(&dst.ko_hashes, &src.ko_hashes)
    _hashlist_restore(&dst.hashes_before_black_pass, &src.hashes_before_black_pass)
    _hashlist_restore(&dst.hashes_before_white_pass, &src.hashes_before_white_pass)
    dst.encore_ko_captures = captures
    dst.encore_ko_captures_capacity = captures_capacity
    if captures_capacity < src.num_encore_ko_captures:
        free(captures)
        dst.encore_ko_captures = <EncoreKoCapture*>malloc(src.num_encore_ko_captures * sizeof(EncoreKoCapture))
        dst.encore_ko_captures_capacity = src.num_encore_ko_captures
    if src.num_encore_ko_captures > 0:
        memcpy(dst.encore_ko_captures, src.encore_ko_captures, src.num_encore_ko_captures * sizeof(EncoreKoCapture))
    # Each move advanced the recent-board ring by one and overwrote that slot.
    for i in range(1, min(played, NUM_RECENT_BOARDS) + 1):
        memcpy(&dst.recent_boards[(src.current_recent_board_idx + i) % NUM_RECENT_BOARDS],
               &src.recent_boards[(src.current_recent_board_idx + i) % NUM_RECENT_BOARDS], sizeof(Board))

cdef void _set_ko_recap_blocked(History* h, Loc loc, bint value) noexcept nogil:
    if h.ko_recap_blocked[loc] != value:
        h.ko_recap_blocked[loc] = value
        h.ko_recap_block_hash = hash_xor(h.ko_recap_block_hash, zobrist_aux(AUX_KO_RECAP_MARK, loc, C_BLACK))

cdef void history_clear(History* h, const Board* board, Color pla, const Rules* rules, int encore_phase) noexcept nogil:
    cdef int i, x, y
    cdef Loc loc
    h.rules = rules[0]
    h.num_moves = 0
    h.ko_hashes.size = 0
    h.first_turn_idx_with_ko_history = 0
    memcpy(&h.board, board, sizeof(Board))
    memcpy(&h.initial_board, board, sizeof(Board))
    h.initial_pla = pla
    h.initial_encore_phase = encore_phase
    h.assume_multiple_starting_black_moves_are_handicap = False
    h.white_has_moved = False
    h.override_num_handicap_stones = -1
    for i in range(NUM_RECENT_BOARDS):
        memcpy(&h.recent_boards[i], board, sizeof(Board))
    h.current_recent_board_idx = 0
    h.presumed_next_pla = pla
    memset(h.was_ever_occupied_or_played, 0, MAX_ARR_SIZE)
    for y in range(board.y_size):
        for x in range(board.x_size):
            loc = loc_of(x, y, board.x_size)
            h.was_ever_occupied_or_played[loc] = board.colors[loc] != C_EMPTY
    memset(h.super_ko_banned, 0, MAX_ARR_SIZE)
    h.super_ko_bans_stale = False
    h.consecutive_ending_passes = 0
    h.hashes_before_black_pass.size = 0
    h.hashes_before_white_pass.size = 0
    h.num_turns_this_phase = 0
    h.num_approx_valid_turns_this_phase = 0
    h.num_consec_valid_turns_this_game = 0
    memset(h.ko_recap_blocked, 0, MAX_ARR_SIZE)
    h.ko_recap_block_hash.h0 = 0
    h.ko_recap_block_hash.h1 = 0
    h.num_encore_ko_captures = 0
    h.white_bonus_score = 0.0
    h.white_handicap_bonus_score = 0.0
    h.encore_phase = encore_phase
    h.has_button = rules.has_button and encore_phase == 0
    h.is_past_normal_phase_end = False
    h.is_game_finished = False
    h.winner = C_EMPTY
    h.final_white_minus_black_score = 0.0
    h.is_scored = False
    h.is_no_result = False
    h.is_resignation = False
    if encore_phase == 2:
        memcpy(h.second_encore_start_colors, board.colors, MAX_ARR_SIZE)
    else:
        memset(h.second_encore_start_colors, C_EMPTY, MAX_ARR_SIZE)
    _hashlist_push(&h.ko_hashes, _ko_hash(&h.rules, board, pla, encore_phase, h.ko_recap_block_hash))
    if rules.scoring_rule == SCORING_TERRITORY:
        # Territory scoring counts stones played, not stones present: every stone
        # on the starting board (and every captured one) was a move.
        for y in range(board.y_size):
            for x in range(board.x_size):
                loc = loc_of(x, y, board.x_size)
                if board.colors[loc] == C_BLACK:
                    h.white_bonus_score += 1.0
                elif board.colors[loc] == C_WHITE:
                    h.white_bonus_score -= 1.0
        h.white_bonus_score -= <float>(board.num_white_captures - board.num_black_captures)
    h.white_handicap_bonus_score = <float>_compute_white_handicap_bonus(h)


# ---- handicap -----------------------------------------------------------------
cdef int _handicap_stones_helper(const Board* b, int black_non_pass_turns_to_start) noexcept nogil:
    cdef int x, y, nb = 0, nw = 0, advantage
    cdef Loc loc
    for y in range(b.y_size):
        for x in range(b.x_size):
            loc = loc_of(x, y, b.x_size)
            if b.colors[loc] == C_BLACK:
                nb += 1
            elif b.colors[loc] == C_WHITE:
                nw += 1
    if nw != 0:
        return 0  # a set-up position with white stones is not a handicap game
    advantage = nb + black_non_pass_turns_to_start
    if advantage <= 1:
        return 0
    return advantage

cdef int history_compute_num_handicap_stones(const History* h) noexcept nogil:
    cdef int i, black_turns = 0
    cdef Move m
    if h.override_num_handicap_stones >= 0:
        return h.override_num_handicap_stones
    if h.assume_multiple_starting_black_moves_are_handicap:
        # Free placement is often recorded as consecutive black moves (maybe with white passes between).
        for i in range(h.num_moves):
            m = h.moves[i]
            if m.pla != C_BLACK:
                if i + 1 < h.num_moves and h.moves[i + 1].pla != C_BLACK:
                    black_turns = 0
                    break
                if m.loc == PASS_LOC:
                    continue
                break
            if m.loc != PASS_LOC and m.loc != NULL_LOC:
                black_turns += 1
    return _handicap_stones_helper(&h.initial_board, black_turns)

cdef int _compute_white_handicap_bonus(const History* h) noexcept nogil:
    cdef int n
    if h.rules.white_handicap_bonus_rule == WHB_ZERO:
        return 0
    n = history_compute_num_handicap_stones(h)
    if h.rules.white_handicap_bonus_rule == WHB_N:
        return n
    return n - 1 if n > 1 else 0

cdef void history_set_assume_multiple_starting_black_moves_are_handicap(History* h, bint value) noexcept nogil:
    h.assume_multiple_starting_black_moves_are_handicap = value
    h.white_handicap_bonus_score = <float>_compute_white_handicap_bonus(h)


# ---- settings and simple queries ------------------------------------------------
cdef void _set_final_score_and_winner(History* h, float score) noexcept nogil:
    h.final_white_minus_black_score = score
    if score > 0.0:
        h.winner = C_WHITE
    elif score < 0.0:
        h.winner = C_BLACK
    else:
        h.winner = C_EMPTY

cdef void history_set_komi(History* h, float komi) noexcept nogil:
    cdef float old = h.rules.komi
    h.rules.komi = komi
    if h.is_game_finished and h.is_scored:
        _set_final_score_and_winner(h, h.final_white_minus_black_score - old + komi)

cdef float history_white_komi_adjustment_for_draws(const History* h, double draw_equivalent_wins_for_white) noexcept nogil:
    # Draws are folded into komi as if the final score were jittered by +-0.5.
    if rules_game_result_will_be_integer(&h.rules):
        return <float>(draw_equivalent_wins_for_white - 0.5)
    return 0.0

cdef float history_current_self_komi(const History* h, Color pla, double draw_equivalent_wins_for_white) noexcept nogil:
    cdef float white_komi = (h.white_bonus_score + h.white_handicap_bonus_score + h.rules.komi
                             + history_white_komi_adjustment_for_draws(h, draw_equivalent_wins_for_white))
    return white_komi if pla == C_WHITE else -white_komi

cdef const Board* history_recent_board(const History* h, int moves_ago) noexcept nogil:
    cdef int idx = (h.current_recent_board_idx - moves_ago + NUM_RECENT_BOARDS) % NUM_RECENT_BOARDS
    return &h.recent_boards[idx]

cdef bint history_suicide_legal_for_pass_alive(const History* h) noexcept nogil:
    return h.rules.multi_stone_suicide_legal or h.always_pass_alive_under_suicide_rules

cdef bint history_is_final_phase(const History* h) noexcept nogil:
    return h.rules.scoring_rule == SCORING_AREA or (h.rules.scoring_rule == SCORING_TERRITORY and h.encore_phase >= 2)


# ---- legality -----------------------------------------------------------------
cdef bint history_is_pass_for_ko(const History* h, Loc loc, Color pla) noexcept nogil:
    """In the encore, playing on a blocked ko (or a capture of one) means "pass for ko"."""
    cdef const Board* b = &h.board
    cdef Loc ko_cap
    if h.encore_phase > 0 and 0 <= loc < MAX_ARR_SIZE and loc != PASS_LOC:
        if (b.colors[loc] == opp_of(pla) and h.ko_recap_blocked[loc]
                and board_chain_size(b, loc) == 1 and board_num_liberties(b, loc) == 1):
            return True
        ko_cap = board_ko_capture_loc(b, loc, pla)
        if ko_cap != NULL_LOC and h.ko_recap_blocked[ko_cap] and b.colors[ko_cap] == opp_of(pla):
            return True
    return False

cdef bint history_is_legal(const History* h, Loc loc, Color pla) noexcept nogil:
    cdef const Board* b = &h.board
    if pla != h.presumed_next_pla:
        return False
    if h.encore_phase > 0:
        if history_is_pass_for_ko(h, loc, pla):
            return True
    elif loc == b.ko_loc and loc != NULL_LOC:
        return False
    if not board_is_legal_ignoring_ko(b, loc, pla, h.rules.multi_stone_suicide_legal):
        return False
    if 0 <= loc < MAX_ARR_SIZE:
        # One point's ban when the bans are stale (a descent checks every move it plays): no board scan.
        if h.super_ko_bans_stale:
            if _superko_ban_at(h, loc, h.super_ko_bans_pla):
                return False
        elif h.super_ko_banned[loc]:
            return False
    return True

cdef bint history_is_legal_tolerant(const History* h, Loc loc, Color pla) noexcept nogil:
    if pla != C_BLACK and pla != C_WHITE:
        return False
    return history_is_pass_for_ko(h, loc, pla) or board_is_legal_ignoring_ko(&h.board, loc, pla, True)


# ---- passes and phase ends ------------------------------------------------------
cdef int _consecutive_ending_passes_after_pass(const History* h) noexcept nogil:
    # Under spight ko only a repeated pass (below) ends the main phase, never a count of passes.
    if h.encore_phase == 0 and h.rules.ko_rule == KO_SPIGHT:
        return 0
    return h.consecutive_ending_passes + 1

cdef bint _phase_has_spightlike_ending(const History* h) noexcept nogil:
    # Passes clear ko history (and a repeated pass ends the phase) in the encore and under simple or spight ko.
    return h.encore_phase > 0 or h.rules.ko_rule == KO_SIMPLE or h.rules.ko_rule == KO_SPIGHT

cdef bint _would_be_spightlike_ending_pass(const History* h, Color pla, Hash128 ko_hash_before) noexcept nogil:
    if _phase_has_spightlike_ending(h):
        if pla == C_BLACK and _hashlist_contains(&h.hashes_before_black_pass, ko_hash_before):
            return True
        if pla == C_WHITE and _hashlist_contains(&h.hashes_before_white_pass, ko_hash_before):
            return True
    return False

cdef bint history_pass_would_end_phase(const History* h, Color pla) noexcept nogil:
    cdef Hash128 before = _ko_hash(&h.rules, &h.board, pla, h.encore_phase, h.ko_recap_block_hash)
    return _consecutive_ending_passes_after_pass(h) >= 2 or _would_be_spightlike_ending_pass(h, pla, before)

cdef bint history_pass_would_end_game(const History* h, Color pla) noexcept nogil:
    return history_pass_would_end_phase(h, pla) and history_is_final_phase(h)

cdef bint history_should_suppress_end_game_from_friendly_pass(const History* h, Color pla) noexcept nogil:
    cdef Hash128 before
    if not (h.rules.friendly_pass_ok and h.rules.scoring_rule == SCORING_AREA):
        return False
    if _consecutive_ending_passes_after_pass(h) != 2:
        return False
    before = _ko_hash(&h.rules, &h.board, pla, h.encore_phase, h.ko_recap_block_hash)
    return not _would_be_spightlike_ending_pass(h, pla, before)


# ---- scoring ------------------------------------------------------------------
cdef int _area_score_white_minus_black(const History* h, Color* area) noexcept nogil:
    cdef int score = 0, region_count = 0, x, y
    cdef Loc loc
    cdef const Board* b = &h.board
    if h.rules.tax_rule == TAX_NONE:
        area_calculate(b, area, True, True, True, history_suicide_legal_for_pass_alive(h))
    else:
        area_independent_life(b, area, &region_count, False, True, history_suicide_legal_for_pass_alive(h))
        if h.rules.tax_rule == TAX_ALL:
            score -= 2 * region_count
    for y in range(b.y_size):
        for x in range(b.x_size):
            loc = loc_of(x, y, b.x_size)
            if area[loc] == C_WHITE:
                score += 1
            elif area[loc] == C_BLACK:
                score -= 1
    return score

cdef int _territory_score_white_minus_black(const History* h, Color* area) noexcept nogil:
    """Territory plus (in effect) stones, since moves were chilled one point each; fills area too."""
    cdef int score = 0, region_count = 0, x, y
    cdef bint keep_territories = h.rules.tax_rule == TAX_NONE
    cdef Loc loc
    cdef const Board* b = &h.board
    area_independent_life(b, area, &region_count, keep_territories, False, history_suicide_legal_for_pass_alive(h))
    for y in range(b.y_size):
        for x in range(b.x_size):
            loc = loc_of(x, y, b.x_size)
            if area[loc] == C_WHITE:
                score += 1
            elif area[loc] == C_BLACK:
                score -= 1
            else:
                # Before encore phase 2 (a game cut short) every stone counts as its owner's.
                if b.colors[loc] == C_WHITE and (h.encore_phase < 2 or h.second_encore_start_colors[loc] == C_WHITE):
                    score += 1
                    area[loc] = C_WHITE
                if b.colors[loc] == C_BLACK and (h.encore_phase < 2 or h.second_encore_start_colors[loc] == C_BLACK):
                    score -= 1
                    area[loc] = C_BLACK
    if h.rules.tax_rule == TAX_ALL:
        score -= 2 * region_count
    return score

cdef int history_area_now(const History* h, Color* area) noexcept nogil:
    if h.rules.scoring_rule == SCORING_AREA:
        return _area_score_white_minus_black(h, area)
    return _territory_score_white_minus_black(h, area)

cdef void _take_button_at_end(History* h) noexcept nogil:
    if h.has_button:
        h.has_button = False
        h.white_bonus_score += 0.5 if h.presumed_next_pla == C_WHITE else -0.5

cdef void _mark_finished_scored(History* h, int board_score) noexcept nogil:
    _set_final_score_and_winner(h, board_score + h.white_bonus_score + h.white_handicap_bonus_score + h.rules.komi)
    h.is_scored = True
    h.is_no_result = False
    h.is_resignation = False
    h.is_game_finished = True
    h.is_past_normal_phase_end = False

cdef void history_end_and_score_now(History* h, Color* area) noexcept nogil:
    cdef int board_score = history_area_now(h, area)
    _take_button_at_end(h)
    _mark_finished_scored(h, board_score)

cdef void history_end_game_if_all_pass_alive(History* h) noexcept nogil:
    cdef Color area[MAX_ARR_SIZE]
    cdef int board_score = 0, x, y
    cdef Loc loc
    cdef const Board* b = &h.board
    area_calculate(b, area, False, False, False, history_suicide_legal_for_pass_alive(h))
    for y in range(b.y_size):
        for x in range(b.x_size):
            loc = loc_of(x, y, b.x_size)
            if area[loc] == C_WHITE:
                board_score += 1
            elif area[loc] == C_BLACK:
                board_score -= 1
            else:
                return
    if h.rules.tax_rule == TAX_ALL:
        history_end_and_score_now(h, area)
    else:
        _take_button_at_end(h)
        _mark_finished_scored(h, board_score)

cdef void history_set_winner_by_resignation(History* h, Color winner) noexcept nogil:
    h.is_game_finished = True
    h.is_past_normal_phase_end = False
    h.is_scored = False
    h.is_no_result = False
    h.is_resignation = True
    h.winner = winner
    h.final_white_minus_black_score = 0.0


# ---- making moves ---------------------------------------------------------------
cdef void _push_move(History* h, Loc loc, Color pla) noexcept nogil:
    cdef int cap
    if h.num_moves >= h.moves_capacity:
        cap = h.moves_capacity * 2 if h.moves_capacity > 0 else INITIAL_LIST_CAPACITY
        h.moves = <Move*>realloc(h.moves, cap * sizeof(Move))
        h.moves_capacity = cap
    h.moves[h.num_moves].loc = loc
    h.moves[h.num_moves].pla = pla
    h.num_moves += 1

cdef void _push_encore_ko_capture(History* h, Hash128 before, Loc loc, Color pla) noexcept nogil:
    cdef int cap
    if h.num_encore_ko_captures >= h.encore_ko_captures_capacity:
        cap = h.encore_ko_captures_capacity * 2 if h.encore_ko_captures_capacity > 0 else INITIAL_LIST_CAPACITY
        h.encore_ko_captures = <EncoreKoCapture*>realloc(h.encore_ko_captures, cap * sizeof(EncoreKoCapture))
        h.encore_ko_captures_capacity = cap
    h.encore_ko_captures[h.num_encore_ko_captures].pos_hash_before_move = before
    h.encore_ko_captures[h.num_encore_ko_captures].move_loc = loc
    h.encore_ko_captures[h.num_encore_ko_captures].move_pla = pla
    h.num_encore_ko_captures += 1

cdef bint _superko_ban_at(const History* h, Loc loc, Color next_pla) noexcept nogil:
    """Whether next_pla's move at on-board point loc would repeat a ko hash (main phase, non-simple ko)."""
    cdef const Board* b = &h.board
    cdef Hash128 after
    if b.colors[loc] != C_EMPTY:
        return False
    if not h.was_ever_occupied_or_played[loc] and not board_is_suicide(b, loc, next_pla):
        return False   # a stone where none ever stood makes a position never seen before
    if board_is_illegal_suicide(b, loc, next_pla, h.rules.multi_stone_suicide_legal) or loc == b.ko_loc:
        return False
    after = _ko_hash_after_move_main_phase(&h.rules, board_pos_hash_after_move(b, loc, next_pla), opp_of(next_pla))
    return _hashlist_contains(&h.ko_hashes, after)

cdef void _update_superko_bans(History* h, Color next_pla) noexcept nogil:
    """Mark points where next_pla's move would repeat a ko hash (main phase, non-simple ko)."""
    cdef Board* b = &h.board
    cdef int x, y
    cdef Loc loc
    for y in range(b.y_size):
        for x in range(b.x_size):
            loc = loc_of(x, y, b.x_size)
            h.super_ko_banned[loc] = _superko_ban_at(h, loc, next_pla)

cdef const unsigned char* history_superko_banned(const History* h) noexcept nogil:
    cdef History* mutable = <History*>h
    if h.super_ko_bans_stale:
        mutable.super_ko_bans_stale = False
        _update_superko_bans(mutable, h.super_ko_bans_pla)
    return h.super_ko_banned

cdef void history_set_presumed_next_player(History* h, Color pla) noexcept nogil:
    if pla != h.presumed_next_pla:
        h.presumed_next_pla = pla
        if h.encore_phase <= 0 and h.rules.ko_rule != KO_SIMPLE:
            h.super_ko_bans_stale = False
            _update_superko_bans(h, pla)


cdef void _enter_next_encore_phase(History* h, Color mover) noexcept nogil:
    h.encore_phase += 1
    h.num_turns_this_phase = 0
    h.num_approx_valid_turns_this_phase = 0
    if h.encore_phase == 2:
        memcpy(h.second_encore_start_colors, h.board.colors, MAX_ARR_SIZE)
    memset(h.super_ko_banned, 0, MAX_ARR_SIZE)
    h.super_ko_bans_stale = False
    h.consecutive_ending_passes = 0
    h.hashes_before_black_pass.size = 0
    h.hashes_before_white_pass.size = 0
    memset(h.ko_recap_blocked, 0, MAX_ARR_SIZE)
    h.ko_recap_block_hash.h0 = 0
    h.ko_recap_block_hash.h1 = 0
    h.num_encore_ko_captures = 0
    h.ko_hashes.size = 0
    _hashlist_push(&h.ko_hashes, _ko_hash(&h.rules, &h.board, opp_of(mover), h.encore_phase, h.ko_recap_block_hash))
    h.first_turn_idx_with_ko_history = h.num_moves

cdef void history_make_move_assume_legal(History* h, Loc loc, Color pla, bint prevent_encore) noexcept nogil:
    cdef Board* b = &h.board
    cdef Hash128 pos_hash_before = b.pos_hash
    cdef Hash128 ko_hash_before
    cdef bint move_is_illegal, spightlike_ending = False, was_pass_for_ko = False
    cdef Loc ko_cap, l
    cdef Color next_pla = opp_of(pla)
    cdef int x, y, i
    cdef Color area[MAX_ARR_SIZE]

    if h.is_game_finished or h.is_past_normal_phase_end:
        # Keep only the move that ended things as valid history.
        if h.num_approx_valid_turns_this_phase > 1:
            h.num_approx_valid_turns_this_phase = 1
        if h.num_consec_valid_turns_this_game > 1:
            h.num_consec_valid_turns_this_game = 1

    move_is_illegal = not history_is_legal(h, loc, pla)

    h.is_game_finished = False
    h.is_past_normal_phase_end = False
    h.winner = C_EMPTY
    h.final_white_minus_black_score = 0.0
    h.is_scored = False
    h.is_no_result = False
    h.is_resignation = False

    if loc != PASS_LOC:
        h.consecutive_ending_passes = 0
    elif h.has_button:
        # Taking the button: half a point, and a fresh start for ko histories.
        h.has_button = False
        h.white_bonus_score += 0.5 if pla == C_WHITE else -0.5
        h.consecutive_ending_passes = 0
        h.hashes_before_black_pass.size = 0
        h.hashes_before_white_pass.size = 0
        h.ko_hashes.size = 0
        h.first_turn_idx_with_ko_history = h.num_moves + 1
    else:
        if _phase_has_spightlike_ending(h):
            h.ko_hashes.size = 0
            h.first_turn_idx_with_ko_history = h.num_moves + 1
        ko_hash_before = _ko_hash(&h.rules, b, pla, h.encore_phase, h.ko_recap_block_hash)
        h.consecutive_ending_passes = _consecutive_ending_passes_after_pass(h)
        spightlike_ending = _would_be_spightlike_ending_pass(h, pla, ko_hash_before)
        if pla == C_BLACK:
            _hashlist_push(&h.hashes_before_black_pass, ko_hash_before)
        else:
            _hashlist_push(&h.hashes_before_white_pass, ko_hash_before)

    if h.encore_phase > 0 and loc != PASS_LOC:
        if b.colors[loc] == opp_of(pla) and h.ko_recap_blocked[loc]:
            _set_ko_recap_blocked(h, loc, False)
            was_pass_for_ko = True
            b.ko_loc = NULL_LOC
        else:
            ko_cap = board_ko_capture_loc(b, loc, pla)
            if ko_cap != NULL_LOC and h.ko_recap_blocked[ko_cap] and b.colors[ko_cap] == opp_of(pla):
                _set_ko_recap_blocked(h, ko_cap, False)
                was_pass_for_ko = True
                b.ko_loc = NULL_LOC

    if not was_pass_for_ko:
        board_play_assume_legal(b, loc, pla)
        if h.encore_phase > 0:
            if b.ko_loc != NULL_LOC:
                _set_ko_recap_blocked(h, loc, True)
                _push_encore_ko_capture(h, pos_hash_before, loc, pla)
                b.ko_loc = NULL_LOC
            for y in range(b.y_size):
                for x in range(b.x_size):
                    l = loc_of(x, y, b.x_size)
                    if b.colors[l] == C_EMPTY and h.ko_recap_blocked[l]:
                        _set_ko_recap_blocked(h, l, False)

    h.current_recent_board_idx = (h.current_recent_board_idx + 1) % NUM_RECENT_BOARDS
    memcpy(&h.recent_boards[h.current_recent_board_idx], b, sizeof(Board))

    _hashlist_push(&h.ko_hashes, _ko_hash(&h.rules, b, next_pla, h.encore_phase, h.ko_recap_block_hash))
    _push_move(h, loc, pla)
    h.num_turns_this_phase += 1
    h.num_approx_valid_turns_this_phase += 1
    h.num_consec_valid_turns_this_game += 1
    h.presumed_next_pla = next_pla
    if move_is_illegal:
        h.num_consec_valid_turns_this_game = 0
    if loc != PASS_LOC:
        h.was_ever_occupied_or_played[loc] = True

    h.super_ko_bans_stale = False
    if h.encore_phase <= 0 and h.rules.ko_rule != KO_SIMPLE:
        h.super_ko_bans_stale = True   # computed when first read (history_superko_banned)
        h.super_ko_bans_pla = next_pla
    elif h.encore_phase > 0:
        # In the encore each ko may be captured only once per position by each player.
        memset(h.super_ko_banned, 0, MAX_ARR_SIZE)
        for i in range(h.num_encore_ko_captures):
            if hash_eq(h.encore_ko_captures[i].pos_hash_before_move, b.pos_hash) and h.encore_ko_captures[i].move_pla == next_pla:
                h.super_ko_banned[h.encore_ko_captures[i].move_loc] = True

    # Territory scoring: each move in the main phase and first encore costs a point.
    if h.rules.scoring_rule == SCORING_TERRITORY and h.encore_phase <= 1 and loc != PASS_LOC and not was_pass_for_ko:
        h.white_bonus_score += 1.0 if pla == C_BLACK else -1.0

    if pla == C_WHITE and loc != PASS_LOC:
        h.white_has_moved = True
    if (h.assume_multiple_starting_black_moves_are_handicap and not h.white_has_moved and pla == C_BLACK
            and h.rules.white_handicap_bonus_rule != WHB_ZERO):
        h.white_handicap_bonus_score = <float>_compute_white_handicap_bonus(h)

    if h.consecutive_ending_passes >= 2 or spightlike_ending:
        if h.rules.scoring_rule == SCORING_AREA:
            history_end_and_score_now(h, area)
        elif h.encore_phase >= 2:
            history_end_and_score_now(h, area)
        elif prevent_encore:
            h.is_past_normal_phase_end = True
            if h.num_approx_valid_turns_this_phase > 1:
                h.num_approx_valid_turns_this_phase = 1
            if h.num_consec_valid_turns_this_game > 1:
                h.num_consec_valid_turns_this_game = 1
        else:
            _enter_next_encore_phase(h, pla)

    # Long cycles without passes end the game with no result where superko does not forbid them.
    if loc != PASS_LOC and (h.encore_phase > 0 or h.rules.ko_rule == KO_SIMPLE):
        if _hashlist_count(&h.ko_hashes, h.ko_hashes.items[h.ko_hashes.size - 1]) >= NO_RESULT_REPETITIONS:
            h.is_no_result = True
            h.is_game_finished = True

cdef bint history_play(History* h, Loc loc, Color pla) noexcept nogil:
    if not history_is_legal(h, loc, pla):
        return False
    history_make_move_assume_legal(h, loc, pla, False)
    return True

cdef bint history_play_tolerant(History* h, Loc loc, Color pla, bint prevent_encore) noexcept nogil:
    if not history_is_legal_tolerant(h, loc, pla):
        return False
    history_make_move_assume_legal(h, loc, pla, prevent_encore)
    return True


# ---- situation hash (NN cache key) ----------------------------------------------
cdef inline bint _any_byte_set(const unsigned char* flags, int count) noexcept nogil:
    """Whether any of count bytes is nonzero (an OR over all of them: no branch per byte)."""
    cdef unsigned char seen = 0
    cdef int i
    for i in range(count):
        seen |= flags[i]
    return seen != 0


cdef Hash128 history_situation_ko_hash(const History* h, Color next_pla,
                                       double draw_equivalent_wins_for_white) noexcept nogil:
    """KataGo's BoardHistory::getSituationRulesAndKoHash, bit for bit (its Zobrist numbers and constants)."""
    cdef const Board* b = &h.board
    cdef const unsigned char* banned = history_superko_banned(h)
    cdef Hash128 r = hash_xor(hash_xor(b.pos_hash, zobrist_player(next_pla)), zobrist_encore(h.encore_phase))
    cdef int x, y
    cdef Loc loc
    cdef Color c
    cdef float self_komi
    cdef uint64_t komi_hash
    if h.encore_phase == 0 and b.ko_loc != NULL_LOC:
        r = hash_xor(r, zobrist_ko(b.ko_loc))
    # In the main phase only banned points add to the hash, and most positions have none: the board is
    # walked only when one is set (a search hashes every leaf this way).
    if h.encore_phase > 0 or _any_byte_set(banned, MAX_ARR_SIZE):
        for y in range(b.y_size):
            for x in range(b.x_size):
                loc = loc_of(x, y, b.x_size)
                if banned[loc] and (h.encore_phase > 0 or loc != b.ko_loc):
                    r = hash_xor(r, zobrist_ko(loc))
                if h.encore_phase > 0 and h.ko_recap_blocked[loc]:
                    r = hash_xor(r, hash_xor(zobrist_ko_mark(loc, C_BLACK), zobrist_ko_mark(loc, C_WHITE)))
                if h.encore_phase == 2:
                    c = h.second_encore_start_colors[loc]
                    if c != C_EMPTY:
                        r = hash_xor(r, zobrist_second_encore(loc, c))
    self_komi = history_current_self_komi(h, next_pla, draw_equivalent_wins_for_white)
    komi_hash = murmur_mix(<uint64_t><int64_t>(self_komi * <float>256.0))
    r.h0 ^= komi_hash
    r.h1 ^= basic_lcong(komi_hash)
    r = hash_xor(r, ko_rule_hash(h.rules.ko_rule))
    r = hash_xor(r, scoring_rule_hash(h.rules.scoring_rule))
    r = hash_xor(r, tax_rule_hash(h.rules.tax_rule))
    if h.rules.multi_stone_suicide_legal:
        r = hash_xor(r, multi_stone_suicide_hash())
    if h.has_button:
        r = hash_xor(r, button_hash())
    if h.rules.friendly_pass_ok:
        r = hash_xor(r, friendly_pass_ok_hash())
    return r
