# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""GameState: a game in progress as Python sees it (see game_state.pxd); the rules live in history.pyx."""
from libc.string cimport memcpy

from katacli._core.board cimport (
    Board, Loc, Color, Hash128, C_EMPTY, C_BLACK, C_WHITE, MAX_ARR_SIZE, MAX_LEN, NULL_LOC, PASS_LOC,
    loc_of, loc_x, loc_y, board_init, board_num_stones, board_sym_sit_hash_with_simple_ko, GoBoard,
)
from katacli._core.rules cimport (
    Rules, KO_SIMPLE, KO_POSITIONAL, KO_SITUATIONAL, KO_SPIGHT, SCORING_AREA, SCORING_TERRITORY,
    TAX_NONE, TAX_SEKI, TAX_ALL, WHB_ZERO, WHB_N_MINUS_ONE, WHB_N,
)
from katacli._core.history cimport (
    history_init, history_clear, history_free, history_copy, history_set_komi,
    history_set_assume_multiple_starting_black_moves_are_handicap, history_set_presumed_next_player,
    history_is_legal, history_is_legal_tolerant, history_is_pass_for_ko, history_pass_would_end_phase, history_pass_would_end_game,
    history_current_self_komi, history_white_komi_adjustment_for_draws, history_compute_num_handicap_stones,
    history_suicide_legal_for_pass_alive, history_superko_banned, history_situation_ko_hash, history_area_now,
    history_play, history_play_tolerant, history_end_and_score_now, history_end_game_if_all_pass_alive,
    history_set_winner_by_resignation,
)
from katacli._core.rules_value import CoreRules


# The draw value GameState.situation_hash assumes (KataGo's drawEquivalentWinsForWhite default).
cdef double DEFAULT_DRAW_EQUIVALENT_WINS = 0.5


class IllegalMoveError(ValueError):
    """A move that the rules do not allow in this position."""


cdef Rules _rules_from_tuple(tuple t) except *:
    cdef Rules r
    if len(t) != 8:
        raise ValueError("rules tuple must be (ko, scoring, tax, suicide, button, whb, friendly_pass_ok, komi)")
    ko, scoring, tax, suicide, button, whb, friendly, komi = t
    if ko not in (KO_SIMPLE, KO_POSITIONAL, KO_SITUATIONAL, KO_SPIGHT):
        raise ValueError(f"bad ko rule code {ko!r}")
    if scoring not in (SCORING_AREA, SCORING_TERRITORY):
        raise ValueError(f"bad scoring rule code {scoring!r}")
    if tax not in (TAX_NONE, TAX_SEKI, TAX_ALL):
        raise ValueError(f"bad tax rule code {tax!r}")
    if whb not in (WHB_ZERO, WHB_N_MINUS_ONE, WHB_N):
        raise ValueError(f"bad white handicap bonus code {whb!r}")
    komi = float(komi)
    if not (-400.0 <= komi <= 400.0) or komi * 2 != int(komi * 2):
        raise ValueError(f"komi {komi} must be an integer or half-integer in [-400, 400]")
    r.ko_rule = ko
    r.scoring_rule = scoring
    r.tax_rule = tax
    r.multi_stone_suicide_legal = bool(suicide)
    r.has_button = bool(button)
    r.white_handicap_bonus_rule = whb
    r.friendly_pass_ok = bool(friendly)
    r.komi = komi
    return r

# Tromp-Taylor with komi 7.5, KataGo's default rules for a fresh GTP engine.
DEFAULT_RULES_TUPLE = CoreRules(KO_POSITIONAL, SCORING_AREA, TAX_NONE, True, False, WHB_ZERO, False, 7.5)


cdef class GameState:
    """A game in progress: board, rules and history.

    Points are (x, y) with y = 0 the top row, or None for pass; players are
    1 (black) and 2 (white). Methods raise ValueError / IllegalMoveError for
    bad input and never leave the state half-changed.
    """

    def __cinit__(self):
        self._initialised = False

    def __init__(self, int x_size=19, int y_size=-1, rules=DEFAULT_RULES_TUPLE, int next_player=C_BLACK,
                 GoBoard board=None, int encore_phase=0):
        cdef Board b
        cdef Rules r = _rules_from_tuple(tuple(rules))
        if y_size < 0:
            y_size = x_size
        if board is not None:
            memcpy(&b, &board.b, sizeof(Board))
        else:
            if not (2 <= x_size <= MAX_LEN and 2 <= y_size <= MAX_LEN):
                raise ValueError(f"board size {x_size}x{y_size} is not supported (2..{MAX_LEN} per side)")
            board_init(&b, x_size, y_size)
        if next_player != C_BLACK and next_player != C_WHITE:
            raise ValueError("next_player must be 1 (black) or 2 (white)")
        if encore_phase not in (0, 1, 2) or (encore_phase > 0 and r.scoring_rule != SCORING_TERRITORY):
            raise ValueError("encore phases 1 and 2 exist only under territory scoring")
        if self._initialised:
            history_free(&self.h)
        history_init(&self.h, &b, <Color>next_player, &r, encore_phase)
        self._initialised = True

    def __dealloc__(self):
        if self._initialised:
            history_free(&self.h)

    def copy(self):
        cdef GameState other = GameState.__new__(GameState)
        history_copy(&other.h, &self.h)
        other._initialised = True
        return other

    def history_start(self):
        """A new state at the start of this history (since the game began or its last reset): the initial
        stones, player and encore phase, the same rules and modes. A record of ``moves`` replays from here,
        as KataGo's WriteSgf replays a history."""
        cdef GameState other = GameState.__new__(GameState)
        cdef Rules r = self.h.rules
        cdef Board b
        history_copy(&other.h, &self.h)
        other._initialised = True
        memcpy(&b, &self.h.initial_board, sizeof(Board))
        history_clear(&other.h, &b, self.h.initial_pla, &r, self.h.initial_encore_phase)
        history_set_assume_multiple_starting_black_moves_are_handicap(
            &other.h, self.h.assume_multiple_starting_black_moves_are_handicap)
        return other

    cdef Loc _loc(self, xy) except? -1:
        if xy is None:
            return PASS_LOC
        x, y = xy
        if not (0 <= x < self.h.board.x_size and 0 <= y < self.h.board.y_size):
            raise ValueError(f"point {xy} is off the {self.h.board.x_size}x{self.h.board.y_size} board")
        return loc_of(x, y, self.h.board.x_size)

    cdef _xy(self, Loc loc):
        if loc == PASS_LOC:
            return None
        return (loc_x(loc, self.h.board.x_size), loc_y(loc, self.h.board.x_size))

    @staticmethod
    def _check_player(int pla):
        if pla != C_BLACK and pla != C_WHITE:
            raise ValueError(f"player must be 1 (black) or 2 (white), not {pla}")

    # -- basic properties
    @property
    def x_size(self):
        return self.h.board.x_size

    @property
    def y_size(self):
        return self.h.board.y_size

    @property
    def next_player(self):
        return self.h.presumed_next_pla

    @property
    def rules_tuple(self):
        """The rules as a CoreRules named tuple (katacli._core.rules_value)."""
        r = self.h.rules
        return CoreRules(r.ko_rule, r.scoring_rule, r.tax_rule, bool(r.multi_stone_suicide_legal), bool(r.has_button),
                r.white_handicap_bonus_rule, bool(r.friendly_pass_ok), float(r.komi))

    @property
    def komi(self):
        return float(self.h.rules.komi)

    def set_komi(self, komi):
        komi = float(komi)
        if not (-400.0 <= komi <= 400.0) or komi * 2 != int(komi * 2):
            raise ValueError(f"komi {komi} must be an integer or half-integer in [-400, 400]")
        history_set_komi(&self.h, komi)

    def set_next_player(self, int pla):
        """Change who moves next without a move (GTP's loose turn order); recomputes superko bans."""
        GameState._check_player(pla)
        history_set_presumed_next_player(&self.h, <Color>pla)

    def reset_history_keep_board(self, int pla):
        """Forget the history but keep the stones, with pla to move (KataGo's setPlayerAndClearHistory).

        The simple-ko point is dropped and the encore phase kept; the handicap
        convention flag survives, as in KataGo.
        """
        GameState._check_player(pla)
        cdef Board b
        cdef Rules r = self.h.rules
        cdef bint assume_handicap = self.h.assume_multiple_starting_black_moves_are_handicap
        memcpy(&b, &self.h.board, sizeof(Board))
        b.ko_loc = NULL_LOC
        history_clear(&self.h, &b, <Color>pla, &r, self.h.encore_phase)
        history_set_assume_multiple_starting_black_moves_are_handicap(&self.h, assume_handicap)

    def set_always_pass_alive_under_suicide_rules(self, bint value):
        """Compute pass-alive areas as if multi-stone suicide were legal (a game-level mode newer nets ask
        for; move legality is unaffected). Kept by copies and by reset_history_keep_board."""
        self.h.always_pass_alive_under_suicide_rules = value

    @property
    def always_pass_alive_under_suicide_rules(self):
        return bool(self.h.always_pass_alive_under_suicide_rules)

    def suicide_legal_for_pass_alive(self):
        """Whether pass-alive areas (final scoring, ending games, training targets) treat multi-stone suicide
        as legal: the rules allow it or the always-pass-alive-under-suicide mode is on (KataGo's
        suicideLegalForPassAlive)."""
        return bool(history_suicide_legal_for_pass_alive(&self.h))

    def white_komi_adjustment_for_draws(self, double draw_equivalent_wins_for_white):
        """What White's score gains when draws count as ``draw_equivalent_wins_for_white`` wins: that minus
        0.5 where the result can be an integer (a draw is possible), else 0; a float32, as KataGo's
        whiteKomiAdjustmentForDraws."""
        return float(history_white_komi_adjustment_for_draws(&self.h, draw_equivalent_wins_for_white))

    def set_assume_multiple_starting_black_moves_are_handicap(self, bint value):
        history_set_assume_multiple_starting_black_moves_are_handicap(&self.h, value)

    @property
    def encore_phase(self):
        return self.h.encore_phase

    @property
    def moves(self):
        """Moves played since the initial position: list of (player, (x, y) or None)."""
        return [(self.h.moves[i].pla, self._xy(self.h.moves[i].loc)) for i in range(self.h.num_moves)]

    @property
    def initial_player(self):
        return self.h.initial_pla

    def initial_stones(self):
        """Stones of the initial position: list of (player, (x, y))."""
        cdef int x, y
        cdef Loc loc
        out = []
        for y in range(self.h.initial_board.y_size):
            for x in range(self.h.initial_board.x_size):
                loc = loc_of(x, y, self.h.initial_board.x_size)
                if self.h.initial_board.colors[loc] == C_BLACK or self.h.initial_board.colors[loc] == C_WHITE:
                    out.append((self.h.initial_board.colors[loc], (x, y)))
        return out

    def board(self):
        """A copy of the current board as a GoBoard."""
        cdef GoBoard g = GoBoard.__new__(GoBoard)
        memcpy(&g.b, &self.h.board, sizeof(Board))
        return g

    def color_at(self, xy):
        return self.h.board.colors[self._loc(xy)]

    def colors(self):
        return [[self.h.board.colors[loc_of(x, y, self.h.board.x_size)] for x in range(self.h.board.x_size)]
                for y in range(self.h.board.y_size)]

    @property
    def ko_point(self):
        if self.h.board.ko_loc == NULL_LOC:
            return None
        return self._xy(self.h.board.ko_loc)

    @property
    def captures(self):
        return (self.h.board.num_black_captures, self.h.board.num_white_captures)

    def superko_banned_points(self):
        cdef int x, y
        return [(x, y) for y in range(self.h.board.y_size) for x in range(self.h.board.x_size)
                if history_superko_banned(&self.h)[loc_of(x, y, self.h.board.x_size)]]

    def ko_recap_blocked_points(self):
        cdef int x, y
        return [(x, y) for y in range(self.h.board.y_size) for x in range(self.h.board.x_size)
                if self.h.ko_recap_blocked[loc_of(x, y, self.h.board.x_size)]]

    # -- moves
    def is_legal(self, xy, int pla):
        GameState._check_player(pla)
        cdef Loc l = self._loc(xy)
        return history_is_legal(&self.h, l, <Color>pla)

    def is_legal_tolerant(self, xy, int pla):
        """Whether play_tolerant would take the move (KataGo's isLegalTolerant): any empty point or pass for ko,
        suicide tolerated, either player."""
        GameState._check_player(pla)
        return history_is_legal_tolerant(&self.h, self._loc(xy), <Color>pla)

    def is_pass_for_ko(self, xy, int pla):
        """True when pla playing xy in the encore means "pass for ko" (KataGo's rule: the board stays)."""
        GameState._check_player(pla)
        return history_is_pass_for_ko(&self.h, self._loc(xy), <Color>pla)

    def legal_moves(self, int pla=0):
        """All legal points for pla (default: the player to move), plus None for pass."""
        cdef int x, y
        if pla == 0:
            pla = self.h.presumed_next_pla
        GameState._check_player(pla)
        out = [(x, y) for y in range(self.h.board.y_size) for x in range(self.h.board.x_size)
               if history_is_legal(&self.h, loc_of(x, y, self.h.board.x_size), <Color>pla)]
        out.append(None)
        return out

    def play(self, xy, int pla):
        """Play a move under the rules; raises IllegalMoveError (state unchanged) if not allowed.

        GTP lets either colour move; if pla is not the presumed next player the
        turn is handed over first, as KataGo's engine does.
        """
        GameState._check_player(pla)
        cdef Loc l = self._loc(xy)
        if l != PASS_LOC and self.h.board.colors[l] != C_EMPTY and not history_is_pass_for_ko(&self.h, l, <Color>pla):
            raise IllegalMoveError(f"point {xy} is occupied")
        cdef GameState saved = None
        if pla != self.h.presumed_next_pla:
            saved = self.copy()
            self.set_next_player(pla)
        if not history_play(&self.h, l, <Color>pla):
            if saved is not None:
                history_free(&self.h)
                history_copy(&self.h, &saved.h)
            raise IllegalMoveError(f"illegal move at {xy}")
        # A GameState keeps its bans current: nogil readers (features on several threads) then only read.
        history_superko_banned(&self.h)

    def play_tolerant(self, xy, int pla, bint prevent_encore=False):
        """Play as when loading an SGF: any empty point, suicide tolerated. Raises IllegalMoveError if impossible."""
        GameState._check_player(pla)
        cdef Loc l = self._loc(xy)
        if not history_play_tolerant(&self.h, l, <Color>pla, prevent_encore):
            raise IllegalMoveError(f"move at {xy} cannot be played even tolerantly")
        history_superko_banned(&self.h)

    # -- phase and result
    def pass_would_end_phase(self, int pla=0):
        return history_pass_would_end_phase(&self.h, <Color>(pla or self.h.presumed_next_pla))

    def pass_would_end_game(self, int pla=0):
        return history_pass_would_end_game(&self.h, <Color>(pla or self.h.presumed_next_pla))

    @property
    def is_game_finished(self):
        return bool(self.h.is_game_finished)

    @property
    def is_past_normal_phase_end(self):
        """True after the passes that would start the encore, when the encore is being prevented."""
        return bool(self.h.is_past_normal_phase_end)

    @property
    def is_no_result(self):
        return bool(self.h.is_no_result)

    @property
    def is_resignation(self):
        return bool(self.h.is_resignation)

    @property
    def is_scored(self):
        return bool(self.h.is_scored)

    @property
    def winner(self):
        return self.h.winner

    @property
    def final_white_minus_black_score(self):
        return float(self.h.final_white_minus_black_score)

    @property
    def has_button(self):
        return bool(self.h.has_button)

    @property
    def white_bonus_score(self):
        return float(self.h.white_bonus_score)

    @property
    def white_handicap_bonus_score(self):
        return float(self.h.white_handicap_bonus_score)

    def self_komi(self, int pla, double draw_equivalent_wins_for_white=0.5):
        GameState._check_player(pla)
        return float(history_current_self_komi(&self.h, <Color>pla, draw_equivalent_wins_for_white))

    @property
    def num_stones(self):
        """Stones on the board (both colours)."""
        return board_num_stones(&self.h.board)

    def num_handicap_stones(self):
        return history_compute_num_handicap_stones(&self.h)

    def area_now(self):
        """(rows of owner colour codes, board score white minus black) as if the game were scored now."""
        cdef Color area[MAX_ARR_SIZE]
        cdef int score = history_area_now(&self.h, area)
        rows = [[area[loc_of(x, y, self.h.board.x_size)] for x in range(self.h.board.x_size)]
                for y in range(self.h.board.y_size)]
        return rows, score

    def end_and_score_now(self):
        cdef Color area[MAX_ARR_SIZE]
        history_end_and_score_now(&self.h, area)

    def end_game_if_all_pass_alive(self):
        history_end_game_if_all_pass_alive(&self.h)

    def set_winner_by_resignation(self, int winner):
        GameState._check_player(winner)
        history_set_winner_by_resignation(&self.h, <Color>winner)

    def situation_hash(self, int pla=0):
        cdef Hash128 r = history_situation_ko_hash(&self.h, <Color>(pla or self.h.presumed_next_pla),
                                                   DEFAULT_DRAW_EQUIVALENT_WINS)
        return (<object>r.h1 << 64) | <object>r.h0

    def sym_hashes(self, int pla=0):
        """(thisHash, symHash) as KataGo's analysis engine reports them, as 128-bit ints (hash1 high): the board's
        stones, simple-ko point and player to move (getSitHashWithSimpleKo), and the smallest of that over the
        board's 8 symmetries (a non-square board's transposed ones included, as KataGo's getSymBoard)."""
        cdef Color p = <Color>(pla or self.h.presumed_next_pla)
        cdef Hash128 r
        cdef int sym
        hashes = []
        for sym in range(8):
            r = board_sym_sit_hash_with_simple_ko(&self.h.board, sym, p)
            hashes.append((<object>r.h1 << 64) | <object>r.h0)
        return hashes[0], min(hashes)

    def __str__(self):
        return str(self.board())
