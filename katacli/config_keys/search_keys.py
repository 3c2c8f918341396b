"""Keys that feed :class:`katacli.search.params.SearchParams`.

Ranges and defaults follow KataGo's Setup::loadParams. Where KataGo uses one
default for the interactive engines (gtp, analysis, benchmark) and another for
self-play, the spec's ``default`` is the interactive one and ``mode_defaults``
holds the self-play value (or the other way round when only gtp/analysis are
special). GTP-only adjustments KataGo makes after loading (conservativePass,
fillDameBeforePass) are mode defaults too.
"""
from __future__ import annotations

from katacli.config_keys.builders import (
    INTERACTIVE_MODES,
    bool_key,
    enabled_key,
    float_key,
    for_modes,
    int_key,
    player_key,
    section,
    str_key,
)
from katacli.config_keys.spec import (
    NUM_SYMMETRIES,
    UNLIMITED_TIME,
    UNLIMITED_VISITS,
    DerivedDefault,
    Enabled,
    Unsupported,
    same_as,
)

# Upper bounds KataGo puts on a few "practically unbounded" knobs.
MAX_SEARCH_THREADS = 4096
# numLeafFeatureThreads: -1 picks a count (katacli.search.params.leaf_feature_threads); a helper fills
# leaves only while the search thread descends, so one keeps up with it and more rarely pay.
AUTO_LEAF_FEATURE_THREADS = -1
AUTO_LEAF_FEATURE_THREADS_MIN_LEAVES = 2
MAX_LEAF_FEATURE_THREADS = 64
MAX_CHOSEN_MOVE_VISIT_ADJUST = 1.0e10
NO_NOISE_PRUNING_CAP = 1.0e50
HUMAN_SL_PIKL_LAMBDA_OFF = 1.0e9
# Root fpu reduction when root noise is off; with noise KataGo uses none.
ROOT_FPU_REDUCTION_WITHOUT_NOISE = 0.1
# Root policy optimism is capped at this fraction when it follows policyOptimism.
ROOT_POLICY_OPTIMISM_CAP = 0.2

SELFPLAY = ("selfplay",)

SEARCH_LIMIT_KEYS = section("Search limits", [
    int_key("maxVisits", UNLIMITED_VISITS, 1, UNLIMITED_VISITS,
            "Stop searching once the tree holds this many visits, including ones reused from earlier turns."),
    int_key("maxPlayouts", UNLIMITED_VISITS, 1, UNLIMITED_VISITS,
            "Stop after this many new playouts this turn, not counting reused ones."),
    float_key("maxTime", UNLIMITED_TIME, 0.0, UNLIMITED_TIME, "Stop after this many seconds of thinking."),
    int_key("maxVisitsPondering", UNLIMITED_VISITS, 1, UNLIMITED_VISITS, "maxVisits used while pondering."),
    int_key("maxPlayoutsPondering", UNLIMITED_VISITS, 1, UNLIMITED_VISITS, "maxPlayouts used while pondering."),
    float_key("maxTimePondering", UNLIMITED_TIME, 0.0, UNLIMITED_TIME, "maxTime used while pondering."),
    float_key("lagBuffer", 0.0, 0.0, 3600.0,
              "Seconds per move held back from the clock to cover network and GUI lag."),
    float_key("searchFactorAfterOnePass", 1.0, 0.0, 1.0,
              "Scale all search limits by this after the opponent passes once."),
    float_key("searchFactorAfterTwoPass", 1.0, 0.0, 1.0,
              "Scale all search limits by this after the opponent passes twice in a row."),
])

TIME_CONTROL_KEYS = section("Time control", [
    float_key("treeReuseCarryOverTimeFactor", 0.0, 0.0, 1.0,
              "Count this share of the reused tree's time as already spent on the new move."),
    float_key("overallocateTimeFactor", 1.0, 0.01, 100.0, "Think this many times longer than the base time plan."),
    float_key("midgameTimeFactor", 1.0, 0.01, 100.0, "Extra thinking-time multiplier at the peak of the middle game."),
    float_key("midgameTurnPeakTime", 130.0, 0.0, 1000.0, "Turn (on 19x19) where the middle game weight peaks."),
    float_key("endgameTurnTimeDecay", 100.0, 0.0, 1000.0, "Turns (on 19x19) over which the middle game weight fades."),
    float_key("obviousMovesTimeFactor", 1.0, 0.01, 1.0, "Time multiplier applied to very obvious moves."),
    float_key("obviousMovesPolicyEntropyTolerance", 0.30, 0.001, 2.0,
              "Policy entropy scale below which a move counts as obvious."),
    float_key("obviousMovesPolicySurpriseTolerance", 0.15, 0.001, 2.0,
              "Search-vs-policy surprise scale below which a move counts as obvious."),
    float_key("futileVisitsThreshold", 0.0, 0.01, 1.0,
              "Stop exploring moves that can no longer reach this share of the best move's visits (0 = off)."),
])

THREAD_KEYS = section("Threads", [
    int_key("numSearchThreads", 1, 1, MAX_SEARCH_THREADS,
            "Leaves one search keeps in flight per network batch (KataGo's search threads); the main speed "
            "knob, tune it with `kata benchmark`.",
            required_in=("gtp", "analysis", "selfplay")),
    int_key("numSearchThreadsPerAnalysisThread", None, 1, MAX_SEARCH_THREADS,
            "Analysis engine spelling of numSearchThreads (leaves in flight per analyzed position)."),
    float_key("minPlayoutsPerThread", 0.0, 0.0, UNLIMITED_TIME,
              "Use fewer threads when a search is so small that each would get fewer playouts than this.",
              mode_defaults=for_modes(INTERACTIVE_MODES, 8.0)),
    float_key("numVirtualLossesPerThread", 1.0, 0.01, 1000.0,
              "Virtual losses a thread adds on its path, to spread threads over different lines."),
    enabled_key("searchPipelining",
                "katacli only, for a network on a GPU: keep two batches of leaves in flight, one on the network "
                "while the search collects the other (numSearchThreads split between them). auto (default): on "
                "where the GPU is the bottleneck -- a CUDA net with graphs of at least 10 GFLOP a position on "
                "the board searched (b18c384nbt on 19x19: 1.45-1.70x on an H100), with 64+ search threads; "
                "off for small nets, whose search may be CPU-bound (g170-b6c96 on an H100 host: 0.89-1.15x "
                "pipelined, by thread count). kata benchmark and kata genconfig on a GPU search their best "
                "thread count both ways and recommend the faster (5%+)."),
    int_key("numLeafFeatureThreads", AUTO_LEAF_FEATURE_THREADS, AUTO_LEAF_FEATURE_THREADS, MAX_LEAF_FEATURE_THREADS,
            "katacli only: helper threads that build the leaves' network inputs (ladders, pass-alive areas, "
            "feature planes) while the search thread descends to the next leaf of the batch. -1 (auto): 1 when "
            f"numSearchThreads >= {AUTO_LEAF_FEATURE_THREADS_MIN_LEAVES} and the process may use 2 or more CPU "
            "cores (2 with 128+ leaves a batch on 8+ cores), else 0 (searches stepped together -- the analysis engine's, self-play's on a GPU -- share "
            "one per stepping thread where there are 4 or more cores); 0: the search thread does it all. The "
            "search is the same either way, only faster. kata benchmark and kata genconfig on a GPU try one "
            "more helper at their best thread count and recommend it when it is 5%+ faster."),
    int_key("nodeTableShardsPowerOfTwo", 16, 8, 24,
            "Log2 of the number of lock shards in the node table; fixed after startup.",
            unsupported=Unsupported("katacli's node table is not sharded: one thread at a time changes the search graph")),
])

UTILITY_KEYS = section("Utility", [
    float_key("winLossUtilityFactor", 1.0, 0.0, 1.0, "Weight of winning versus losing in the search utility."),
    float_key("staticScoreUtilityFactor", 0.1, 0.0, 1.0, "Weight of the score, centered at zero, in the utility."),
    float_key("dynamicScoreUtilityFactor", 0.3, 0.0, 1.0,
              "Weight of the score, centered near the current expected score, in the utility."),
    float_key("dynamicScoreCenterZeroWeight", 0.20, 0.0, 1.0,
              "Pull the dynamic score center this far toward zero."),
    float_key("dynamicScoreCenterScale", 0.75, 0.2, 5.0,
              "Width of the dynamic score utility; 1.0 is roughly board-sized."),
    float_key("noResultUtilityForWhite", 0.0, -1.0, 1.0,
              "Utility for White of a game with no result (long cycles under simple ko)."),
    float_key("drawEquivalentWinsForWhite", 0.5, 0.0, 1.0, "How many wins a draw is worth to White."),
])

EXPLORATION_KEYS = section("Exploration", [
    float_key("cpuctExploration", 1.0, 0.0, 10.0, "PUCT exploration constant."),
    float_key("cpuctExplorationLog", 0.45, 0.0, 10.0, "Extra exploration that grows with the log of the visits."),
    float_key("cpuctExplorationBase", 500.0, 10.0, 100000.0, "Visit count where the log exploration term kicks in."),
    float_key("cpuctUtilityStdevPrior", 0.40, 1e-8, 10.0,
              "Prior guess of the utility spread, for exploration that adapts to volatility."),
    float_key("cpuctUtilityStdevPriorWeight", 2.0, 0.0, 100.0, "How many visits that prior guess is worth."),
    float_key("cpuctUtilityStdevScale", 0.85, 0.0, 1.0,
              "How strongly exploration follows the observed utility spread (0 = not at all).",
              mode_defaults=for_modes(SELFPLAY, 0.0)),
    float_key("fpuReductionMax", 0.2, 0.0, 2.0, "First-play-urgency reduction for unvisited children."),
    float_key("fpuLossProp", 0.0, 0.0, 1.0, "Blend the first-play value this far toward a loss."),
    bool_key("fpuParentWeightByVisitedPolicy", True,
             "Blend the parent's average and raw value by how much policy mass has been visited."),
    float_key("fpuParentWeightByVisitedPolicyPow", 2.0, 0.0, 5.0, "Power applied to the visited policy mass in that blend."),
    float_key("fpuParentWeight", 0.0, 0.0, 1.0,
              "Fixed blend between parent average (0) and parent raw value (1), when not blending by policy."),
    float_key("policyOptimism", 1.0, 0.0, 1.0, "Blend raw policy toward the optimistic policy head.",
              mode_defaults=for_modes(SELFPLAY, 0.0)),
    float_key("rootFpuReductionMax",
              DerivedDefault("0.0 with root noise, else 0.1",
                             lambda r: 0.0 if r.value("rootNoiseEnabled") else ROOT_FPU_REDUCTION_WITHOUT_NOISE),
              0.0, 2.0, "fpuReductionMax at the root."),
    float_key("rootFpuLossProp", same_as("fpuLossProp"), 0.0, 1.0, "fpuLossProp at the root."),
    float_key("rootPolicyOptimism",
              DerivedDefault("min(policyOptimism, 0.2)",
                             lambda r: min(r.value("policyOptimism"), ROOT_POLICY_OPTIMISM_CAP)),
              0.0, 1.0, "policyOptimism at the root.", mode_defaults=for_modes(SELFPLAY, 0.0)),
    float_key("rootDesiredPerChildVisitsCoeff", 0.0, 0.0, 100.0,
              "Forced playouts: give each root child about sqrt(coeff * policy * visits) visits (self-play)."),
    int_key("rootNumSymmetriesToSample", 1, 1, NUM_SYMMETRIES,
            "Average the root evaluation over this many random board symmetries."),
    bool_key("rootSymmetryPruning", False, "On a symmetric board, search only one of each equivalent move.",
             mode_defaults=for_modes(INTERACTIVE_MODES, True)),
    float_key("wideRootNoise", 0.0, 0.0, 5.0, "Spread root visits over more moves; larger is wider.",
              mode_defaults={"analysis": 0.04}),
])

VALUE_KEYS = section("Value aggregation", [
    float_key("valueWeightExponent", 0.25, 0.0, 1.0, "Down-weight children whose values are much worse than the best."),
    bool_key("useNoisePruning", True, "Prune child weight that the policy prior does not justify.",
             mode_defaults=for_modes(SELFPLAY, False)),
    float_key("noisePruneUtilityScale", 0.15, 0.001, 10.0, "Utility gap at which noise pruning takes effect."),
    float_key("noisePruningCap", NO_NOISE_PRUNING_CAP, 0.0, NO_NOISE_PRUNING_CAP, "Most weight noise pruning may remove."),
    bool_key("useUncertainty", True, "Weight evaluations by the network's own uncertainty estimate.",
             mode_defaults=for_modes(SELFPLAY, False)),
    float_key("uncertaintyCoeff", 0.25, 0.0001, 1.0, "Visit weight given to an uncertainty of one utility unit."),
    float_key("uncertaintyExponent", 1.0, 0.0, 2.0, "Visit weight falls with this power of the uncertainty."),
    float_key("uncertaintyMaxWeight", 8.0, 1.0, 100.0, "Largest weight one evaluation may get."),
    float_key("subtreeValueBiasFactor", 0.45, 0.0, 1.0, "Correct network values by observed errors of similar local patterns."),
    float_key("subtreeValueBiasFreeProp", 0.8, 0.0, 1.0, "Share of a bias entry's weight released when its node leaves the tree."),
    float_key("subtreeValueBiasWeightExponent", 0.85, 0.0, 1.0, "Weight subtree results by visits to this power."),
    bool_key("useEvalCache", False,
             "Remember well-searched positions and bias later searches with them (graph search only); "
             "fixed after startup."),
    int_key("evalCacheMinVisits", 100, 1, UNLIMITED_VISITS,
            "Visits a node needs before the eval cache stores it; fixed after startup."),
    bool_key("useGraphSearch", True, "Share search between transpositions (graph search instead of a tree)."),
    int_key("graphSearchRepBound", 11, 3, 50,
            "Positions are told apart by their recent history unless the last move cannot be part of a "
            "repetition of at most this many points."),
    float_key("graphSearchCatchUpLeakProb", 0.0, 0.0, 1.0,
              "Chance to search a transposition deeper even when its edge is behind the node's visits."),
])

ROOT_NOISE_KEYS = section("Root noise and policy temperature", [
    bool_key("rootNoiseEnabled", False, "Add Dirichlet noise to the root policy (self-play exploration)."),
    float_key("rootDirichletNoiseTotalConcentration", 10.83, 0.001, 10000.0,
              "Total Dirichlet concentration, spread over the legal moves."),
    float_key("rootDirichletNoiseWeight", 0.25, 0.0, 1.0, "Share of the root policy replaced by noise."),
    float_key("rootPolicyTemperature", 1.0, 0.01, 100.0, "Temperature applied to the root policy."),
    float_key("rootPolicyTemperatureEarly", same_as("rootPolicyTemperature"), 0.01, 100.0,
              "Root policy temperature at the start of the game."),
    float_key("nnPolicyTemperature", 1.0, 0.01, 5.0, "Temperature applied to the network policy everywhere in the tree.",
              float32=True),
])

MOVE_SELECTION_KEYS = section("Move selection", [
    float_key("chosenMoveTemperature", 0.1, 0.0, 5.0, "Randomness when picking the move to play, after the opening."),
    float_key("chosenMoveTemperatureEarly", 0.5, 0.0, 5.0, "Randomness when picking the move to play, at the start."),
    float_key("chosenMoveTemperatureHalflife", 19.0, 0.1, 100000.0,
              "Moves (scaled to 19x19) for the early temperature to halve toward the normal one."),
    float_key("chosenMoveTemperatureOnlyBelowProb", 1.0, 0.0, 1.0,
              "Temperature only damps moves less likely than this before temperature."),
    float_key("chosenMoveSubtract", 0.0, 0.0, MAX_CHOSEN_MOVE_VISIT_ADJUST,
              "Subtract this many visits from every move before applying temperature."),
    float_key("chosenMovePrune", 1.0, 0.0, MAX_CHOSEN_MOVE_VISIT_ADJUST, "Never play moves with fewer visits than this."),
    bool_key("useLcbForSelection", True, "Prefer a move whose lower confidence bound beats the most visited move."),
    float_key("lcbStdevs", 5.0, 1.0, 12.0, "Confidence width, in standard deviations, for LCB selection."),
    float_key("minVisitPropForLCB", 0.15, 0.0, 1.0, "A move needs this share of the top move's visits to win by LCB."),
    bool_key("useNonBuggyLcb", True, "Use the corrected LCB computation (self-play keeps the old one).",
             mode_defaults=for_modes(SELFPLAY, False)),
])

BEHAVIOUR_KEYS = section("Passing and play style", [
    float_key("rootEndingBonusPoints", 0.5, -1.0, 1.0,
              "Small bonus nudging the bot to pass and fill dame in a human-friendly way."),
    bool_key("rootPruneUselessMoves", True, "Prune root moves that only prolong a lost game."),
    bool_key("conservativePass", False, "Never assume our own pass ends the game.",
             mode_defaults=for_modes(INTERACTIVE_MODES, True)),
    bool_key("fillDameBeforePass", False, "Under territory scoring, prefer filling dame before passing.",
             mode_defaults={"gtp": True}),
    enabled_key("alwaysComputePassAliveUnderSuicideRules",
                "Compute pass-alive areas as if multi-stone suicide were legal (auto: as the network expects).",
                unsupported=Unsupported("kata gtp and kata analysis compute pass-alive areas as the rules say "
                                        "(as 'false' does)", off=Enabled.FALSE, modes=frozenset({"gtp", "analysis"}))),
    bool_key("enablePassingHacks", False, "Workarounds for rare cases where passing confuses deeper search.",
             mode_defaults=for_modes(INTERACTIVE_MODES, True)),
    bool_key("enableMorePassingHacks", False, "Always search pass and non-pass replies when a pass would end the phase.",
             mode_defaults=for_modes(INTERACTIVE_MODES, True)),
    float_key("playoutDoublingAdvantage", 0.0, -3.0, 3.0,
              "Play as if we had 2^this times the opponent's playouts (negative: as if weaker)."),
    player_key("playoutDoublingAdvantagePla",
               "Apply playoutDoublingAdvantage only when this color moves, negated for the other (BLACK or WHITE)."),
    float_key("avoidRepeatedPatternUtility", 0.0, -3.0, 3.0, "Penalty per repeat of the same local shape in one game."),
    bool_key("antiMirror", False,
             "Fight opponents that mirror our moves: steer the search towards breaking the symmetry."),
    bool_key("ignorePreRootHistory", False, "Hide the moves before the searched position from the network.",
             mode_defaults={"analysis": True}),
    bool_key("ignoreAllHistory", False, "Hide all move history from the network."),
    str_key("searchRandSeed", None, "Fixed seed for search randomness (default: random)."),
])

GTP_SEARCH_KEYS = section("GTP analysis search", [
    float_key("analysisWideRootNoise", 0.04, 0.0, 5.0, "wideRootNoise for GTP analysis commands (not for genmove)."),
    bool_key("analysisIgnorePreRootHistory", True, "ignorePreRootHistory for GTP analysis commands."),
    bool_key("genmoveAntiMirror",
             DerivedDefault("antiMirror if set, else true",
                            lambda r: r.value("antiMirror") if r.is_set("antiMirror") else True),
             "antiMirror for genmove; GTP analysis uses antiMirror itself."),
])

HUMAN_SL_KEYS = section("Human-like play (human SL model)", [
    str_key("humanSLProfile", "", "Profile the human SL model imitates, e.g. rank_5k, preaz_1d, proyear_1990."),
    float_key("humanSLCpuctExploration", 1.0, 0.0, 1000.0, "Exploration constant for moves from the human model."),
    float_key("humanSLCpuctPermanent", 0.0, 0.0, 1000.0, "Exploration term for human moves that does not fade with visits."),
    float_key("humanSLRootExploreProbWeightless", 0.0, 0.0, 1.0,
              "Chance a root playout follows the human policy without counting toward value."),
    float_key("humanSLRootExploreProbWeightful", 0.0, 0.0, 1.0,
              "Chance a root playout follows the human policy and counts toward value."),
    float_key("humanSLPlaExploreProbWeightless", 0.0, 0.0, 1.0, "As the root version, for our own moves deeper in the tree."),
    float_key("humanSLPlaExploreProbWeightful", 0.0, 0.0, 1.0, "As the root version, for our own moves deeper in the tree."),
    float_key("humanSLOppExploreProbWeightless", 0.0, 0.0, 1.0, "As the root version, for opponent moves in the tree."),
    float_key("humanSLOppExploreProbWeightful", 0.0, 0.0, 1.0, "As the root version, for opponent moves in the tree."),
    float_key("humanSLChosenMoveProp", 0.0, 0.0, 1.0, "Share of the final move choice drawn from the human policy."),
    bool_key("humanSLChosenMoveIgnorePass", False, "Ignore the human policy's pass and use the normal passing logic."),
    float_key("humanSLChosenMovePiklLambda", HUMAN_SL_PIKL_LAMBDA_OFF, 0.0, HUMAN_SL_PIKL_LAMBDA_OFF,
              "Utility difference at which the human move choice shifts toward better moves (huge = off)."),
])

# Keys that KataGo refuses unless a human SL model was given with -human-model.
HUMAN_MODEL_ONLY_KEYS = tuple(spec.name for spec in HUMAN_SL_KEYS if spec.name != "humanSLProfile")

SEARCH_KEYS = (
    SEARCH_LIMIT_KEYS + TIME_CONTROL_KEYS + THREAD_KEYS + UTILITY_KEYS + EXPLORATION_KEYS + VALUE_KEYS
    + ROOT_NOISE_KEYS + MOVE_SELECTION_KEYS + BEHAVIOUR_KEYS + GTP_SEARCH_KEYS + HUMAN_SL_KEYS
)
