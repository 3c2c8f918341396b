"""Self-play keys: the game runner, how games are set up (rules, board sizes,
komi, handicap, forks and start positions) and how training rows are chosen
(playout cap randomization, surprise weighting, policy init).

Defaults follow KataGo's selfplay.cpp, play.cpp (GameInitializer, GameRunner)
and playsettings.cpp (PlaySettings::loadForSelfplay). Keys KataGo requires in
self-play carry the PlaySettings struct value as their default, which only
applies when a caller builds settings without a config.
"""
from __future__ import annotations

import dataclasses

from katacli.config_keys.builders import bool_key, float_key, int_key, list_key, section
from katacli.config_keys.engine_keys import KO_RULES, SCORING_RULES, TAX_RULES
from katacli.config_keys.spec import (
    MAX_BOARD_LEN,
    MAX_USER_KOMI,
    MIN_USER_KOMI,
    ValueKind,
    same_as,
)

SELFPLAY_ONLY = ("selfplay",)
MAX_GAME_THREADS = 16384
MAX_MOVES_PER_GAME = 1 << 30
MAX_SEARCH_VISITS_SETTING = 10_000_000
MAX_FORK_CHOICES = 100
# Largest relative board-size weight KataGo accepts (effectively unbounded).
MAX_REL_PROB = 1e100
MAX_EXTRA_BLACK_STONES = 18


def _required(*specs):
    """Mark keys KataGo's self-play refuses to start without."""
    return [dataclasses.replace(spec, required_in=frozenset(SELFPLAY_ONLY)) for spec in specs]


RUNNER_KEYS = section("Self-play runner", [
    *_required(
        int_key("numGameThreads", 1, 1, MAX_GAME_THREADS, "Games played at the same time."),
        int_key("dataBoardLen", MAX_BOARD_LEN, 3, MAX_BOARD_LEN, "Board edge of the written training tensors."),
        int_key("maxDataQueueSize", 2000, 1, 1_000_000, "Finished games that may wait to be written."),
        int_key("maxRowsPerTrainFile", 10000, 1, 100_000_000, "Training rows per output file."),
        float_key("firstFileRandMinProp", 0.15, 0.0, 1.0,
                  "The first file is cut early at a random size between this share and all of maxRowsPerTrainFile."),
        int_key("logGamesEvery", 10, 1, 1_000_000, "Log every this many finished games."),
        bool_key("switchNetsMidGame", True, "Switch to a newly found network in the middle of games."),
        bool_key("logMoves", False, "Log every move of every game."),
        int_key("maxMovesPerGame", 1600, 0, MAX_MOVES_PER_GAME, "End games that reach this many moves."),
    ),
    int_key("inputsVersion", None, 0, 10000, "Training input format version (default: the one current networks use)."),
    int_key("numSelfplayProcesses", None, 1, 1024,
            "katacli only: worker processes sharing numGameThreads, each with its own network copy and files "
            "(default: one per CPU core on the CPU, one with a GPU)."),
    bool_key("clearBotBeforeSearch", False, "Drop the search tree before every move."),
])

GAME_SETUP_KEYS = section("Self-play game setup", [
    *_required(
        list_key("koRules", ValueKind.LIST_STR, ("POSITIONAL",), "Ko rules to sample from.", choices=KO_RULES),
        list_key("scoringRules", ValueKind.LIST_STR, ("AREA",), "Scoring rules to sample from.", choices=SCORING_RULES),
        list_key("taxRules", ValueKind.LIST_STR, ("NONE",), "Tax rules to sample from.", choices=TAX_RULES),
        list_key("multiStoneSuicideLegals", ValueKind.LIST_BOOL, (True,), "Suicide rules to sample from."),
        list_key("hasButtons", ValueKind.LIST_BOOL, (False,), "Button settings to sample from."),
    ),
    list_key("bSizes", ValueKind.LIST_INT, None, "Square board sizes to sample from.", 2, MAX_BOARD_LEN),
    list_key("bSizesXY", ValueKind.INT_PAIRS, None, "Rectangular sizes to sample from, as WIDTH-HEIGHT.",
             2, MAX_BOARD_LEN),
    list_key("bSizeRelProbs", ValueKind.LIST_FLOAT, None, "Relative weight of each entry of bSizes/bSizesXY.",
             0.0, MAX_REL_PROB),
    float_key("allowRectangleProb", 0.0, 0.0, 1.0, "Chance to pair two bSizes entries into a rectangle."),
    float_key("komiMean", 7.5, MIN_USER_KOMI, MAX_USER_KOMI, "Mean komi (use komiAuto instead for fair komi).",
              float32=True),
    bool_key("komiAuto", False, "Pick a fair komi for each board size and ruleset."),
    float_key("komiStdev", 0.0, 0.0, 60.0, "Random spread around the chosen komi.", float32=True),
    float_key("komiBigStdevProb", 0.0, 0.0, 1.0, "Chance of using komiBigStdev instead."),
    float_key("komiBigStdev", 10.0, 0.0, 60.0, "Wider komi spread for some games.", float32=True),
    float_key("komiBiggerStdevProb", 0.0, 0.0, 1.0, "Chance of using komiBiggerStdev instead."),
    float_key("komiBiggerStdev", 30.0, 0.0, 120.0, "Widest komi spread for some games.", float32=True),
    float_key("komiAllowIntegerProb", 1.0, 0.0, 1.0, "Chance that an integer komi (allowing draws) is kept."),
    float_key("handicapProb", 0.0, 0.0, 1.0, "Chance a game is a handicap game."),
    float_key("handicapCompensateKomiProb", 0.0, 0.0, 1.0, "Chance a handicap game gets a fair komi."),
    float_key("forkCompensateKomiProb", same_as("handicapCompensateKomiProb"), 0.0, 1.0,
              "Chance a forked game gets a fair komi."),
    float_key("sgfCompensateKomiProb", same_as("forkCompensateKomiProb"), 0.0, 1.0,
              "Chance a game started from an SGF or hint position gets a fair komi."),
    float_key("handicapKomiInterpZeroProb", 0.0, 0.0, 1.0, "Chance a handicap game's komi is moved toward zero."),
    float_key("sgfKomiInterpZeroProb", 0.0, 0.0, 1.0,
              "Chance an SGF or hint position game's komi is moved toward zero."),
    float_key("noResultStdev", 0.0, 0.0, 1.0, "Randomize the no-result utility per game by this much."),
    float_key("drawRandRadius", 0.0, 0.0, 1.0, "Randomize the value of a draw per game by this much."),
    int_key("numExtraBlackFixed", 0, 1, MAX_EXTRA_BLACK_STONES, "Always give Black this many extra stones."),
    list_key("startPosesFromSgfDir", ValueKind.LIST_STR, None,
             "Directories of SGFs (searched below, all variations) whose unique positions games may start from; "
             "read at start-up."),
    list_key("startPosesSgfExcludes", ValueKind.LIST_STR, None,
             "Files listing SGFs to skip, one KataGo file hash (32 hex digits) a line; # starts a comment."),
    float_key("startPosesProb", 0.0, 0.0, 1.0,
              "Chance a game starts from one of the SGF positions (needs startPosesFromSgfDir)."),
    float_key("startPosesLoadProb", 1.0, 0.0, 1.0, "Share of the SGF positions kept, each at random."),
    float_key("startPosesTurnWeightLambda", 0.0, -10.0, 10.0,
              "Draw SGF positions by exp(-turn * lambda): above 0 prefers earlier turns, below 0 later ones."),
    list_key("hintPosesDir", ValueKind.LIST_STR, None,
             "Directories of *.hintposes.txt, *.startposes.txt and *.bookposes.txt files (KataGo's JSON positions, "
             "one a line; bad lines are skipped and counted)."),
    float_key("hintPosesProb", 0.0, 0.0, 1.0,
              "Chance a game starts from a hint position (needs hintPosesDir); its hinted move is studied first."),
])

TRAINING_DATA_KEYS = section("Self-play training data", [
    *_required(
        bool_key("initGamesWithPolicy", False, "Open games with a few moves sampled from the raw policy."),
        float_key("compensateAfterPolicyInitProb", 0.0, 0.0, 1.0, "Chance to make komi fair after those moves."),
        float_key("sidePositionProb", 0.0, 0.0, 1.0, "Chance to also search a random side branch position."),
        float_key("earlyForkGameProb", 0.0, 0.0, 0.5, "Chance to fork a new game early on."),
        float_key("earlyForkGameExpectedMoveProp", 0.0, 0.0, 1.0, "Where early forks happen, as a share of the board area."),
        float_key("forkGameProb", 0.0, 0.0, 0.5, "Chance per move to fork a new game from it."),
        int_key("forkGameMinChoices", 1, 1, MAX_FORK_CHOICES, "Fewest candidate moves considered when forking."),
        int_key("earlyForkGameMaxChoices", 1, 1, MAX_FORK_CHOICES, "Most candidate moves for an early fork."),
        int_key("forkGameMaxChoices", 1, 1, MAX_FORK_CHOICES, "Most candidate moves for a fork."),
        float_key("cheapSearchProb", 0.0, 0.0, 1.0,
                  "Playout cap randomization: chance a move gets only a cheap search (not used as a policy target)."),
        int_key("cheapSearchVisits", 0, 1, MAX_SEARCH_VISITS_SETTING, "Visits of a cheap search."),
        float_key("cheapSearchTargetWeight", 0.0, 0.0, 1.0, "Training weight of cheap-search rows.", float32=True),
        bool_key("reduceVisits", False, "Search less once the game is clearly decided."),
        float_key("reduceVisitsThreshold", 100.0, 0.0, 0.999999, "Winrate beyond which visits are reduced."),
        int_key("reduceVisitsThresholdLookback", 1, 0, 1000, "Past turns that must also be beyond the threshold."),
        int_key("reducedVisitsMin", 0, 1, MAX_SEARCH_VISITS_SETTING, "Fewest visits after reduction."),
        float_key("reducedVisitsWeight", 1.0, 0.0, 1.0, "Training weight of reduced-visit rows.", float32=True),
        float_key("policySurpriseDataWeight", 0.0, 0.0, 1.0, "Share of row weight moved to positions with surprising policy."),
        float_key("valueSurpriseDataWeight", 0.0, 0.0, 1.0, "Share of row weight moved to positions with surprising value."),
        float_key("handicapAsymmetricPlayoutProb", 0.0, 0.0, 1.0, "Chance a handicap game gives the sides unequal visits."),
        float_key("normalAsymmetricPlayoutProb", 0.0, 0.0, 1.0, "Chance an even game gives the sides unequal visits."),
        float_key("maxAsymmetricRatio", 2.0, 1.0, 100.0, "Largest visit ratio between the sides."),
        float_key("minAsymmetricCompensateKomiProb", 0.0, 0.0, 1.0, "Chance to make komi fair in asymmetric games."),
    ),
    float_key("forkSidePositionProb", None, 0.0, 1.0, "Older name of sidePositionProb."),
    float_key("policyInitAreaProp", 0.04, 0.0, 1.0, "Policy-sampled opening moves, as a share of the board area."),
    float_key("startPosesPolicyInitAreaProp", 0.0, 0.0, 1.0,
              "policyInitAreaProp for games from SGF start positions (0: none)."),
    float_key("policyInitGammaShape", 1.0, 0.5, 10.0, "Shape of the random number of policy-sampled moves."),
    float_key("policyInitAreaTemperature", 1.0, 0.1, 5.0, "Temperature of the policy-sampled opening moves."),
    float_key("handicapTemperature", 1.0, 0.1, 5.0, "Temperature when placing free handicap stones."),
    int_key("compensateKomiVisits", 20, 1, 10000, "Visits used to estimate a fair komi."),
    float_key("flipKomiProbWhenNoCompensate", 0.0, 0.0, 1.0, "Chance to flip komi's sign when it is not made fair."),
    int_key("estimateLeadVisits", 6, 1, 10000, "Visits used to estimate the lead for training."),
    float_key("estimateLeadProb", 0.0, 0.0, 1.0, "Chance per position to estimate the lead."),
    bool_key("fancyKomiVarying", False, "Vary komi in more elaborate ways."),
    float_key("sekiForkHackProb", 0.0, 0.0, 1.0, "Chance to fork extra games from seki positions."),
    bool_key("useSearchValueSurprise", False, "Measure value surprise against the search value, not the outcome."),
    float_key("scaleDataWeight", 1.0, 0.01, 10.0, "Multiply every row's training weight by this."),
    bool_key("useReanalyze", False, "Re-search some positions to refresh their targets."),
    float_key("reanalyzeProp", 0.0, 0.0, 1.0, "Share of positions re-searched."),
    float_key("reanalyzePolicySurpriseWeight", 1.0, 0.0, 100.0, "Policy surprise weight when choosing what to re-search."),
    float_key("reanalyzeValueSurpriseWeight", 1.0, 0.0, 100.0, "Value surprise weight when choosing what to re-search."),
    float_key("reanalyzeSurpriseExponent", 1.0, 0.0, 10.0, "Exponent on surprise when choosing what to re-search."),
    bool_key("reanalyzeUseOutcomeTargets", True, "Keep game-outcome targets for re-searched rows."),
])

SELFPLAY_KEYS = RUNNER_KEYS + GAME_SETUP_KEYS + TRAINING_DATA_KEYS
