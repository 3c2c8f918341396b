# cython: language_level=3
"""Contract: game history on top of the board, exactly KataGo's BoardHistory semantics.

A History owns the current Board plus everything the rules need beyond the
stones: the move list, ko-hash history for positional/situational superko,
superko-banned points for the next player, consecutive passes, the button,
the territory-scoring encore (phases 0, 1, 2, ko-recapture blocks,
second-encore start colours), handicap bonus, and the game result.

Terms:
  ko hash       what superko compares: pos_hash, plus the player to move under
                situational (and simple) ko and in the encore, plus ko-recapture marks.
  ending pass   a pass that counts toward ending the phase (two in a row, or a
                "spight-like" pass repeating a position the same player passed from).
  encore        under territory scoring, two extra phases after the normal end
                where kos cannot be immediately retaken (ko_recap_blocked) and
                phase 2 freezes the stones (second_encore_start_colors) for scoring.
  tolerant play what SGF loading uses: any empty point, either colour, suicide allowed.

Memory: moves and hash lists grow on the heap; call history_free, and use
history_copy (deep) rather than memcpy.
"""
from katacli._core.board cimport Board, Loc, Color, Hash128, MAX_ARR_SIZE
from katacli._core.rules cimport Rules

cdef enum:
    # The boards kept: the current one and the two before it, all that is ever read (the V7 features'
    # ladder planes and pattern hashes look back at most two moves). KataGo keeps six; every move copies
    # the board into this ring and every descent's restore copies back the slots it overwrote, so each
    # slot not needed costs a board copy (~7 KB) per visit.
    NUM_RECENT_BOARDS = 3

cdef struct Move:
    Loc loc
    Color pla

cdef struct EncoreKoCapture:
    Hash128 pos_hash_before_move
    Loc move_loc
    Color move_pla

cdef struct HashList:
    Hash128* items
    int size
    int capacity

cdef struct History:
    Rules rules
    Board board                          # the current position
    Color initial_pla
    int initial_encore_phase
    Move* moves
    int num_moves
    int moves_capacity
    HashList ko_hashes                   # includes the current position's ko hash
    int first_turn_idx_with_ko_history
    bint assume_multiple_starting_black_moves_are_handicap
    bint white_has_moved
    int override_num_handicap_stones     # -1: derive from the position
    int current_recent_board_idx
    Color presumed_next_pla
    unsigned char was_ever_occupied_or_played[MAX_ARR_SIZE]
    unsigned char super_ko_banned[MAX_ARR_SIZE]   # for presumed_next_pla; read through history_superko_banned
    # A move marks the bans stale (for super_ko_bans_pla) instead of recomputing them over the whole
    # board: a descent plays several moves and needs the bans only where it stops.
    bint super_ko_bans_stale
    Color super_ko_bans_pla
    int consecutive_ending_passes
    HashList hashes_before_black_pass
    HashList hashes_before_white_pass
    int encore_phase
    int num_turns_this_phase
    int num_approx_valid_turns_this_phase
    int num_consec_valid_turns_this_game
    unsigned char ko_recap_blocked[MAX_ARR_SIZE]
    Hash128 ko_recap_block_hash
    EncoreKoCapture* encore_ko_captures
    int num_encore_ko_captures
    int encore_ko_captures_capacity
    Color second_encore_start_colors[MAX_ARR_SIZE]
    float white_bonus_score
    float white_handicap_bonus_score
    bint has_button
    bint is_past_normal_phase_end
    bint is_game_finished
    Color winner                         # C_EMPTY: draw, no result, or not finished
    float final_white_minus_black_score
    bint is_scored
    bint is_no_result
    bint is_resignation
    # Session-wide mode kept across history_clear: compute pass-alive areas as if multi-stone
    # suicide were legal (newer nets ask for this); move legality is unaffected.
    bint always_pass_alive_under_suicide_rules
    # Last, so that history_restore copies everything before them in one piece: playing moves never
    # writes initial_board and writes one recent board per move.
    Board initial_board
    Board recent_boards[NUM_RECENT_BOARDS]

# Lifecycle. history_init zero-fills then clears to (board, pla, rules, encore_phase).
cdef void history_init(History* h, const Board* board, Color pla, const Rules* rules, int encore_phase) noexcept nogil
cdef void history_clear(History* h, const Board* board, Color pla, const Rules* rules, int encore_phase) noexcept nogil
cdef void history_free(History* h) noexcept nogil
cdef void history_copy(History* dst, const History* src) noexcept nogil   # dst must be uninitialised or freed
# dst must be a history_copy of src that has since only played moves (history_make_move_assume_legal, history_play*,
# and the const queries): makes it equal to src again, copying only what moves change (a descent's reset).
cdef void history_restore(History* dst, const History* src) noexcept nogil

# Settings.
cdef void history_set_komi(History* h, float komi) noexcept nogil
cdef void history_set_assume_multiple_starting_black_moves_are_handicap(History* h, bint value) noexcept nogil
# Hand the turn to pla without a move (GTP's loose turn order); the superko bans follow the new player.
cdef void history_set_presumed_next_player(History* h, Color pla) noexcept nogil

# Queries.
cdef bint history_is_legal(const History* h, Loc loc, Color pla) noexcept nogil
cdef bint history_is_legal_tolerant(const History* h, Loc loc, Color pla) noexcept nogil
cdef bint history_is_pass_for_ko(const History* h, Loc loc, Color pla) noexcept nogil
cdef bint history_pass_would_end_phase(const History* h, Color pla) noexcept nogil
cdef bint history_pass_would_end_game(const History* h, Color pla) noexcept nogil
cdef bint history_should_suppress_end_game_from_friendly_pass(const History* h, Color pla) noexcept nogil
cdef bint history_is_final_phase(const History* h) noexcept nogil
cdef float history_current_self_komi(const History* h, Color pla, double draw_equivalent_wins_for_white) noexcept nogil
cdef float history_white_komi_adjustment_for_draws(const History* h, double draw_equivalent_wins_for_white) noexcept nogil
cdef const Board* history_recent_board(const History* h, int moves_ago) noexcept nogil  # 0 = current, < NUM_RECENT_BOARDS
cdef int history_compute_num_handicap_stones(const History* h) noexcept nogil
cdef bint history_suicide_legal_for_pass_alive(const History* h) noexcept nogil
# The superko-banned points, brought up to date first (h is only logically const: the bans are a cache).
cdef const unsigned char* history_superko_banned(const History* h) noexcept nogil
# KataGo's getSituationRulesAndKoHash, bit for bit: stones, player, ko bans, encore, komi, rules.
cdef Hash128 history_situation_ko_hash(const History* h, Color next_pla,
                                       double draw_equivalent_wins_for_white) noexcept nogil
# Area (C_BLACK/C_WHITE/C_EMPTY per Loc) and the board score white-minus-black under the rules, as if scored now.
cdef int history_area_now(const History* h, Color* area) noexcept nogil

# Moves. make_move_assume_legal tolerates pseudolegal moves (KataGo's robustness for SGFs).
# Returns False for history_play when illegal (state unchanged).
cdef void history_make_move_assume_legal(History* h, Loc loc, Color pla, bint prevent_encore) noexcept nogil
cdef bint history_play(History* h, Loc loc, Color pla) noexcept nogil
cdef bint history_play_tolerant(History* h, Loc loc, Color pla, bint prevent_encore) noexcept nogil

# Game end.
cdef void history_end_and_score_now(History* h, Color* area) noexcept nogil
cdef void history_end_game_if_all_pass_alive(History* h) noexcept nogil
cdef void history_set_winner_by_resignation(History* h, Color winner) noexcept nogil
