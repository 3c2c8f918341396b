"""Keys the GTP and analysis engines read outside of search parameters:
logging, rules, resignation, reporting, board size and pattern avoidance.

Defaults follow KataGo's gtp.cpp / analysis.cpp / setup.cpp / logger.cpp.
"""
from __future__ import annotations

from katacli.config_keys.builders import (
    bool_key,
    choice_key,
    enabled_key,
    float_key,
    int_key,
    list_key,
    section,
    str_key,
)
from katacli.config_keys.spec import (
    MAX_BOARD_LEN,
    MAX_USER_KOMI,
    MIN_USER_KOMI,
    DerivedDefault,
    KeyFamily,
    KeySpec,
    ValueKind,
)

KO_RULES = ("SIMPLE", "POSITIONAL", "SITUATIONAL", "SPIGHT")
SCORING_RULES = ("AREA", "TERRITORY")
TAX_RULES = ("NONE", "SEKI", "ALL")
WHITE_HANDICAP_BONUS_RULES = ("0", "N", "N-1")
# Accepted spellings of reportAnalysisWinratesAs (compared case-insensitively).
WINRATE_PERSPECTIVES = ("BLACK", "WHITE", "SIDETOMOVE", "B", "W")

# Komi KataGo assumes when the config spells out the rules piece by piece.
AREA_KOMI = 7.5
TERRITORY_KOMI = 6.5
BUTTON_KOMI = 7.0
# resignMinScoreDifference when unset: so negative that it never blocks resigning.
RESIGN_SCORE_DIFFERENCE_OFF = -1.0e10
MAX_ANALYSIS_THREADS = 16384
MAX_PATTERN_TURN = 1_000_000
MAX_AUTO_AVOID_POSES = 1_000_000_000_000


def _default_komi(resolver) -> float:
    if resolver.value("scoringRule") == "TERRITORY":
        return TERRITORY_KOMI
    if resolver.value("hasButton"):
        return BUTTON_KOMI
    return AREA_KOMI


LOGGING_KEYS = section("Logging", [
    str_key("logDir", None, "Write one log file per run into this directory."),
    str_key("logDirDated", None, "Like logDir, but with a dated subdirectory per run."),
    str_key("logFile", None, "Append all logging to this single file."),
    bool_key("logToStderr", False, "Also echo the log to stderr.", mode_defaults={"analysis": True}),
    bool_key("logToStdout", False, "Also echo the log to stdout."),
    bool_key("logTimeStamp", True, "Prefix log lines with a time stamp."),
    bool_key("logConfigContents", True, "Write the effective config to the log at startup."),
    bool_key("logAllGTPCommunication", False, "Log every GTP command and response.", required_in=("gtp",)),
    bool_key("logSearchInfo", False, "Log a summary of each search.", required_in=("gtp", "selfplay")),
    bool_key("logSearchInfoForChosenMove", False, "Log search details for the move actually played."),
    bool_key("logAllRequests", False, "Log every analysis request."),
    bool_key("logAllResponses", False, "Log every analysis response."),
    bool_key("logErrorsAndWarnings", True, "Log errors and warnings sent back to analysis clients."),
    bool_key("startupPrintMessageToStderr", True, "Print a short startup message to stderr."),
    bool_key("ogsChatToStderr", False, "Write OGS-style chat lines (winrate, PV) to stderr."),
    str_key("homeDataDir", None, "Directory for cached data such as tuning results (default ~/.katago)."),
])

RULES_KEYS = section("Rules", [
    str_key("rules", None,
            "Ruleset name such as tromp-taylor, chinese, japanese, korean, aga, new-zealand, "
            "or a full rules description; excludes the per-rule keys below."),
    choice_key("koRule", "POSITIONAL", KO_RULES, "Ko rule, when not using `rules`."),
    choice_key("scoringRule", "AREA", SCORING_RULES, "Scoring rule, when not using `rules`."),
    choice_key("taxRule",
               DerivedDefault("SEKI for territory scoring, else NONE",
                              lambda r: "SEKI" if r.value("scoringRule") == "TERRITORY" else "NONE"),
               TAX_RULES, "Which points inside living groups are not counted."),
    bool_key("multiStoneSuicideLegal", True, "Whether suicide of more than one stone is legal."),
    bool_key("hasButton", False, "Button Go: the first pass earns half a point (area scoring only)."),
    choice_key("whiteHandicapBonus", "0", WHITE_HANDICAP_BONUS_RULES,
               "Points White gets for Black's N handicap stones: 0, N or N-1."),
    int_key("whiteBonusPerHandicapStone", None, 0, 1, "Older spelling of whiteHandicapBonus: 0 or 1 (= N)."),
    bool_key("friendlyPassOk", False, "Whether passing before removing dead stones is fine."),
    float_key("komi", DerivedDefault("6.5 for territory, 7.0 with button, else 7.5", _default_komi),
              MIN_USER_KOMI, MAX_USER_KOMI, "Komi for commands that take it from the config."),
    float_key("ignoreGTPAndForceKomi", None, MIN_USER_KOMI, MAX_USER_KOMI,
              "Always use this komi, whatever the GTP controller asks for.", float32=True),
    int_key("defaultBoardSize", None, 2, MAX_BOARD_LEN, "Board size at startup until GTP sets one."),
    int_key("defaultBoardXSize", None, 2, MAX_BOARD_LEN, "Board width at startup (overrides defaultBoardSize)."),
    int_key("defaultBoardYSize", None, 2, MAX_BOARD_LEN, "Board height at startup (overrides defaultBoardSize)."),
])

REPORTING_KEYS = section("Analysis and reporting", [
    choice_key("reportAnalysisWinratesAs", "SIDETOMOVE", WINRATE_PERSPECTIVES,
               "Whose point of view winrates and scores are reported from: BLACK, WHITE or SIDETOMOVE.",
               choices_ignore_case=True),
    int_key("analysisPVLen", 13, 1, 1000, "Moves shown in principal variations after the first one.",
            mode_defaults={"analysis": 15}, mode_bounds={"analysis": (1, 100)}),
    int_key("numAnalysisThreads", 1, 1, MAX_ANALYSIS_THREADS, "Positions the analysis engine searches at once.",
            required_in=("analysis",)),
    bool_key("warnUnusedFields", True, "Warn analysis clients about query fields that were ignored."),
    bool_key("assumeMultipleStartingBlackMovesAreHandicap", True,
             "Treat several Black moves in a row at the start as handicap stones."),
    bool_key("preventCleanupPhase", True, "Never enter the territory-scoring cleanup phase after two passes."),
    bool_key("forDeterministicTesting", False, "Seed all randomness for reproducible tests."),
    bool_key("ponderingEnabled", False, "Keep searching during the opponent's turn."),
])

GTP_PLAY_KEYS = section("GTP play", [
    bool_key("allowResignation", False, "Allow the bot to resign lost games."),
    float_key("resignThreshold", -1.0, -1.0, 0.0,
              "Resign when the win/loss value (-1..1) stays below this; must be given with allowResignation."),
    int_key("resignConsecTurns", 3, 1, 100, "Turns in a row the value must stay below the threshold."),
    float_key("resignMinScoreDifference", RESIGN_SCORE_DIFFERENCE_OFF, 0.0, 1000.0,
              "Never resign while the expected score difference is at most this."),
    float_key("resignMinMovesPerBoardArea", 0.0, 0.0, 1.0, "Never resign before turn (this * board area)."),
    enabled_key("cleanupBeforePass", "Capture dead stones before passing (auto: depends on the rules)."),
    enabled_key("friendlyPass", "Pass when the opponent passes and the game is decided (auto: depends on the rules)."),
    float_key("searchFactorWhenWinning", 1.0, 0.01, 1.0, "Scale search limits by this when clearly winning."),
    float_key("searchFactorWhenWinningThreshold", 1.0, 0.0, 1.0, "Winrate above which searchFactorWhenWinning applies."),
    float_key("dynamicPlayoutDoublingAdvantageCapPerOppLead", 0.045, 0.0, 0.5,
              "In handicap or odd-komi games, assume a strength gap of this much per point of opponent lead."),
    float_key("delayMoveScale", 0.0, 0.0, 10000.0, "Mean extra seconds to wait before playing easy moves (0 = never)."),
    float_key("delayMoveMax", 1.0e6, 0.0, 1.0e6, "Longest such wait, in seconds."),
    bool_key("gtpForceMaxNNSize", False, "Size network buffers for the largest board once, instead of per board size."),
    # KataGo 1.17.2 reads it nowhere: known (old configs load), never read, so warned about as unused, as there.
    bool_key("avoidMYTDaggerHack", False, "Legacy switch kept for old configs; has no effect."),
])

AVOID_PATTERN_KEYS = section("Avoid patterns", [
    str_key("autoAvoidRepeatDir", None, "Save played moves here and steer away from repeating them in later games."),
    float_key("autoAvoidRepeatUtility", None, -3.0, 3.0, "Penalty per matching saved move."),
    float_key("autoAvoidRepeatLambda", None, 0.0, 1.0, "Decay of older saved moves per new saved move."),
    int_key("autoAvoidRepeatMinTurnNumber", None, 0, MAX_PATTERN_TURN, "Only save moves from this turn on."),
    int_key("autoAvoidRepeatMaxTurnNumber", None, 0, MAX_PATTERN_TURN, "Only save moves up to this turn."),
    int_key("autoAvoidRepeatMaxPoses", None, 0, MAX_AUTO_AVOID_POSES, "Delete the oldest saved moves beyond this many."),
    int_key("autoAvoidRepeatSaveChunkSize", 200, 1, 10000, "Moves collected before writing them to disk."),
])

_SGF_PATTERN_SET = r"avoidSgf[0-9]*Pattern"
# A match config may give each bot its own value: the bot's index after the key (avoidSgfPatternUtility1).
_BOT_INDEX_SUFFIX = r"[0-9]*"
_BOARD_SIZE_SUFFIX = r"[0-9]+x[0-9]+"


def _per_bot(suffix: str, template: KeySpec) -> KeyFamily:
    return KeyFamily(_SGF_PATTERN_SET + suffix + _BOT_INDEX_SUFFIX, template)


def _per_board_size(param: str, template: KeySpec) -> KeyFamily:
    return KeyFamily(f"autoAvoidRepeat{param}" + _BOARD_SIZE_SUFFIX, template)


AVOID_PATTERN_FAMILIES = [
    _per_bot("Dirs", list_key(
        "avoidSgf<N>PatternDirs", ValueKind.LIST_STR, None, "Directories (or files) of SGFs whose moves to avoid.",
        section="Avoid patterns")),
    _per_bot("Utility", float_key(
        "avoidSgf<N>PatternUtility", None, -3.0, 3.0, "Penalty per move matching those SGFs (negative favours them).",
        section="Avoid patterns")),
    _per_bot("Lambda", float_key(
        "avoidSgf<N>PatternLambda", 1.0, 0.0, 1.0, "Penalty multiplier per older SGF file.", section="Avoid patterns")),
    _per_bot("MinTurnNumber", int_key(
        "avoidSgf<N>PatternMinTurnNumber", 0, 0, MAX_PATTERN_TURN, "Ignore SGF moves before this turn.",
        section="Avoid patterns")),
    _per_bot("MaxFiles", int_key(
        "avoidSgf<N>PatternMaxFiles", 1_000_000, 1, 1_000_000, "Load only the newest this many SGF files.",
        section="Avoid patterns")),
    _per_bot("AllowedNames", list_key(
        "avoidSgf<N>PatternAllowedNames", ValueKind.LIST_STR, None, "Only avoid moves by players with these names.",
        section="Avoid patterns")),
    _per_board_size("Utility", float_key(
        "autoAvoidRepeatUtility<X>x<Y>", None, -3.0, 3.0, "autoAvoidRepeatUtility for one board size.",
        section="Avoid patterns")),
    _per_board_size("Lambda", float_key(
        "autoAvoidRepeatLambda<X>x<Y>", None, 0.0, 1.0, "autoAvoidRepeatLambda for one board size.",
        section="Avoid patterns")),
    _per_board_size("(MinTurnNumber|MaxTurnNumber)", int_key(
        "autoAvoidRepeat<Min|Max>TurnNumber<X>x<Y>", None, 0, MAX_PATTERN_TURN,
        "autoAvoidRepeatMinTurnNumber / MaxTurnNumber for one board size.", section="Avoid patterns")),
    _per_board_size("MaxPoses", int_key(
        "autoAvoidRepeatMaxPoses<X>x<Y>", None, 0, MAX_AUTO_AVOID_POSES, "autoAvoidRepeatMaxPoses for one board size.",
        section="Avoid patterns")),
]

ENGINE_KEYS = LOGGING_KEYS + RULES_KEYS + REPORTING_KEYS + GTP_PLAY_KEYS + AVOID_PATTERN_KEYS
ENGINE_FAMILIES = AVOID_PATTERN_FAMILIES

# Pieces of the rules that KataGo drops when `rules` is given, and vice versa.
INDIVIDUAL_RULE_KEYS = (
    "koRule", "scoringRule", "multiStoneSuicideLegal", "taxRule", "hasButton",
    "whiteBonusPerHandicapStone", "friendlyPassOk", "whiteHandicapBonus",
)
# Only one of these may name where logs go.
LOG_DESTINATION_KEYS = ("logFile", "logDir", "logDirDated")

__all__ = [
    "ENGINE_KEYS", "ENGINE_FAMILIES", "INDIVIDUAL_RULE_KEYS", "LOG_DESTINATION_KEYS", "KO_RULES", "SCORING_RULES",
    "TAX_RULES", "WHITE_HANDICAP_BONUS_RULES", "WINRATE_PERSPECTIVES",
]
