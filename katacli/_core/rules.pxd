# cython: language_level=3
"""Contract: the rules of a game as the C core sees them.

Ko, scoring and tax codes equal KataGo's (rules.h); the white-handicap-bonus
codes are ordered 0, N-1, N (KataGo numbers N before N-1) -- they never leave
the process, katacli.game.rules maps names, JSON and presets onto this struct. Validation (komi range,
half-integers, preset names) is done in Python, never here.
"""

cdef enum KoRule:
    KO_SIMPLE = 0
    KO_POSITIONAL = 1
    KO_SITUATIONAL = 2
    KO_SPIGHT = 3        # passes lift ko bans; a repeated pass ends the phase

cdef enum ScoringRule:
    SCORING_AREA = 0
    SCORING_TERRITORY = 1

cdef enum TaxRule:
    TAX_NONE = 0
    TAX_SEKI = 1
    TAX_ALL = 2

cdef enum WhiteHandicapBonusRule:
    WHB_ZERO = 0
    WHB_N_MINUS_ONE = 1
    WHB_N = 2

cdef struct Rules:
    int ko_rule
    int scoring_rule
    int tax_rule
    bint multi_stone_suicide_legal
    bint has_button
    int white_handicap_bonus_rule
    bint friendly_pass_ok
    float komi

cdef inline bint rules_game_result_will_be_integer(const Rules* r) noexcept nogil:
    # A button half-point makes integer komi results half-integers and vice versa.
    cdef bint komi_is_integer = (<int>r.komi) == r.komi
    return komi_is_integer != r.has_button
