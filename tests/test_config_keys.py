"""The key registry (katacli.config_keys) and the shipped example configs."""
from __future__ import annotations

import re

import pytest

from katacli import config_keys
from katacli.config import Config
from katacli.config_keys import DerivedDefault, Enabled, ValueKind

from support.paths import CONFIGS as CONFIG_DIR
SHIPPED_CONFIGS = [
    ("gtp_example.cfg", "gtp"),
    ("analysis_example.cfg", "analysis"),
    ("selfplay_example.cfg", "selfplay"),
]

# Key names that KataGo 1.17.2's cpp/configs/gtp_example.cfg sets or shows
# commented out (checked by hand against that file; the file itself is not
# available to the tests).
KATAGO_GTP_EXAMPLE_KEYS = """
logDir logDirDated logFile logAllGTPCommunication logSearchInfo logSearchInfoForChosenMove logToStderr
startupPrintMessageToStderr ogsChatToStderr homeDataDir analysisPVLen reportAnalysisWinratesAs
analysisWideRootNoise analysisIgnorePreRootHistory rules koRule scoringRule taxRule multiStoneSuicideLegal
hasButton friendlyPassOk whiteHandicapBonus defaultBoardSize ignoreGTPAndForceKomi allowResignation
resignThreshold resignConsecTurns resignMinScoreDifference resignMinMovesPerBoardArea
assumeMultipleStartingBlackMovesAreHandicap dynamicPlayoutDoublingAdvantageCapPerOppLead
playoutDoublingAdvantage playoutDoublingAdvantagePla conservativePass preventCleanupPhase rootSymmetryPruning
avoidMYTDaggerHack avoidRepeatedPatternUtility antiMirror enablePassingHacks ignorePreRootHistory useEvalCache
evalCacheMinVisits maxVisits maxPlayouts maxTime ponderingEnabled maxVisitsPondering maxPlayoutsPondering
maxTimePondering lagBuffer numSearchThreads searchFactorAfterOnePass searchFactorAfterTwoPass
searchFactorWhenWinning searchFactorWhenWinningThreshold nnMaxBatchSize nnCacheSizePowerOfTwo
nnMutexPoolSizePowerOfTwo nnRandomize nnRandSeed gtpForceMaxNNSize numNNServerThreadsPerModel
trtTransformerNHWC trtDeviceToUse trtDeviceToUseThread0 trtDeviceToUseThread1 trtDeviceToUseThread2
cudaDeviceToUse cudaDeviceToUseThread0 cudaDeviceToUseThread1 cudaDeviceToUseThread2 cudaUseFP16 cudaUseNHWC
cudaUse1x1Matmul metalDeviceToUseThread0 metalDeviceToUseThread3 metalUseFP16 openclReTunePerBoardSize
openclDeviceToUse openclDeviceToUseThread0 openclUseFP16 numEigenThreadsPerModel searchRandSeed
chosenMoveTemperatureEarly chosenMoveTemperatureHalflife chosenMoveTemperature chosenMoveSubtract
chosenMovePrune rootNumSymmetriesToSample useLcbForSelection lcbStdevs minVisitPropForLCB
winLossUtilityFactor staticScoreUtilityFactor dynamicScoreUtilityFactor dynamicScoreCenterZeroWeight
dynamicScoreCenterScale noResultUtilityForWhite drawEquivalentWinsForWhite cpuctExploration
cpuctExplorationLog cpuctUtilityStdevPrior cpuctUtilityStdevPriorWeight cpuctUtilityStdevScale
fpuReductionMax rootFpuReductionMax fpuParentWeightByVisitedPolicy useUncertainty uncertaintyExponent
uncertaintyCoeff rootPolicyOptimism policyOptimism valueWeightExponent rootEndingBonusPoints
rootPruneUselessMoves subtreeValueBiasFactor subtreeValueBiasWeightExponent useGraphSearch
nodeTableShardsPowerOfTwo numVirtualLossesPerThread useNoisePruning autoAvoidRepeatDir
autoAvoidRepeatUtility autoAvoidRepeatLambda autoAvoidRepeatMaxPoses autoAvoidRepeatMinTurnNumber
autoAvoidRepeatMaxTurnNumber autoAvoidRepeatSaveChunkSize avoidSgfPatternDirs avoidSgfPatternUtility
avoidSgfPatternMaxFiles avoidSgfPatternLambda avoidSgfPatternAllowedNames avoidSgfPatternMinTurnNumber
avoidSgf2PatternDirs avoidSgf2PatternUtility avoidSgf2PatternMaxFiles avoidSgf2PatternLambda
avoidSgf2PatternAllowedNames avoidSgf2PatternMinTurnNumber
""".split()

# Extra keys from KataGo's analysis_example.cfg and training/selfplay*.cfg.
KATAGO_ANALYSIS_AND_SELFPLAY_KEYS = """
numAnalysisThreads numSearchThreadsPerAnalysisThread logAllRequests logAllResponses logErrorsAndWarnings
warnUnusedFields wideRootNoise maxBoardXSizeForNNBuffer maxBoardYSizeForNNBuffer requireMaxBoardSize
logMoves logGamesEvery logToStdout dataBoardLen maxDataQueueSize maxRowsPerTrainFile firstFileRandMinProp
earlyForkGameProb earlyForkGameExpectedMoveProp forkGameProb forkGameMinChoices earlyForkGameMaxChoices
forkGameMaxChoices sekiForkHackProb startPosesProb startPosesFromSgfDir startPosesLoadProb
startPosesTurnWeightLambda startPosesPolicyInitAreaProp hintPosesProb hintPosesDir initGamesWithPolicy
policyInitAreaProp compensateAfterPolicyInitProb sidePositionProb forkSidePositionProb cheapSearchProb
cheapSearchVisits cheapSearchTargetWeight reduceVisits reduceVisitsThreshold reduceVisitsThresholdLookback
reducedVisitsMin reducedVisitsWeight handicapAsymmetricPlayoutProb normalAsymmetricPlayoutProb
maxAsymmetricRatio minAsymmetricCompensateKomiProb policySurpriseDataWeight valueSurpriseDataWeight
estimateLeadProb estimateLeadVisits switchNetsMidGame fancyKomiVarying numGameThreads maxMovesPerGame koRules
scoringRules taxRules multiStoneSuicideLegals hasButtons bSizes bSizeRelProbs allowRectangleProb komiAuto
komiMean komiStdev komiBigStdevProb komiBigStdev komiBiggerStdevProb komiBiggerStdev handicapProb
handicapCompensateKomiProb forkCompensateKomiProb sgfCompensateKomiProb handicapKomiInterpZeroProb
sgfKomiInterpZeroProb drawRandRadius noResultStdev cudaDeviceToUseModel0 cudaDeviceToUseModel0Thread7
rootNoiseEnabled rootDirichletNoiseTotalConcentration rootDirichletNoiseWeight rootDesiredPerChildVisitsCoeff
rootPolicyTemperatureEarly rootPolicyTemperature useNonBuggyLcb fpuParentWeightByVisitedPolicyPow
chosenMoveTemperatureOnlyBelowProb delayMoveScale delayMoveMax humanSLProfile humanSLChosenMoveProp
humanSLChosenMoveIgnorePass humanSLChosenMovePiklLambda humanSLCpuctExploration humanSLCpuctPermanent
humanSLRootExploreProbWeightless humanSLRootExploreProbWeightful humanSLPlaExploreProbWeightless
humanSLPlaExploreProbWeightful humanSLOppExploreProbWeightless humanSLOppExploreProbWeightful
""".split()


@pytest.mark.parametrize("key", KATAGO_GTP_EXAMPLE_KEYS + KATAGO_ANALYSIS_AND_SELFPLAY_KEYS)
def test_katago_example_config_keys_are_registered(key):
    assert config_keys.is_known(key)


@pytest.mark.parametrize("key", ["maxVisit", "cpuct", "numSearchThread", "fooBar", "cudaDeviceToUseThreadX",
                                 "avoidSgfPatternFoo", "logdir"])
def test_misspelt_keys_are_unknown(key):
    assert not config_keys.is_known(key)


@pytest.mark.parametrize("typo,suggestion", [
    ("maxVisit", "maxVisits"), ("logdir", "logDir"), ("numSearchThread", "numSearchThreads"), ("zzz", None),
])
def test_suggestions(typo, suggestion):
    assert config_keys.suggest_key(typo) == suggestion


# --------------------------------------------------------------------------- defaults per mode

# (key, mode, expected default) as KataGo's setup.cpp / gtp.cpp / analysis.cpp / play code define them.
MODE_DEFAULTS = [
    ("maxVisits", "gtp", 1 << 50),
    ("maxTime", "analysis", 1e20),
    ("numSearchThreads", "gtp", 1),
    ("minPlayoutsPerThread", "gtp", 8.0),
    ("minPlayoutsPerThread", "analysis", 8.0),
    ("minPlayoutsPerThread", "selfplay", 0.0),
    ("minPlayoutsPerThread", "benchmark", 0.0),
    ("staticScoreUtilityFactor", "gtp", 0.1),
    ("dynamicScoreUtilityFactor", "gtp", 0.3),
    ("cpuctExplorationLog", "gtp", 0.45),
    ("cpuctUtilityStdevPrior", "gtp", 0.40),
    ("cpuctUtilityStdevScale", "gtp", 0.85),
    ("cpuctUtilityStdevScale", "selfplay", 0.0),
    ("policyOptimism", "analysis", 1.0),
    ("policyOptimism", "selfplay", 0.0),
    ("rootPolicyOptimism", "gtp", 0.2),
    ("rootPolicyOptimism", "selfplay", 0.0),
    ("rootFpuReductionMax", "gtp", 0.1),
    ("valueWeightExponent", "gtp", 0.25),
    ("useNoisePruning", "gtp", True),
    ("useNoisePruning", "selfplay", False),
    ("useUncertainty", "benchmark", True),
    ("useUncertainty", "selfplay", False),
    ("useGraphSearch", "selfplay", True),
    ("rootSymmetryPruning", "gtp", True),
    ("rootSymmetryPruning", "benchmark", False),
    ("chosenMoveTemperature", "gtp", 0.1),
    ("chosenMoveTemperatureEarly", "gtp", 0.5),
    ("useLcbForSelection", "gtp", True),
    ("lcbStdevs", "gtp", 5.0),
    ("minVisitPropForLCB", "gtp", 0.15),
    ("useNonBuggyLcb", "selfplay", False),
    ("conservativePass", "gtp", True),
    ("conservativePass", "analysis", True),
    ("conservativePass", "selfplay", False),
    ("fillDameBeforePass", "gtp", True),
    ("fillDameBeforePass", "analysis", False),
    ("wideRootNoise", "analysis", 0.04),
    ("wideRootNoise", "gtp", 0.0),
    ("ignorePreRootHistory", "analysis", True),
    ("ignorePreRootHistory", "gtp", False),
    ("enablePassingHacks", "gtp", True),
    ("enablePassingHacks", "selfplay", False),
    ("subtreeValueBiasFactor", "gtp", 0.45),
    ("subtreeValueBiasWeightExponent", "gtp", 0.85),
    ("numVirtualLossesPerThread", "gtp", 1.0),
    ("alwaysComputePassAliveUnderSuicideRules", "gtp", Enabled.AUTO),
    ("analysisWideRootNoise", "gtp", 0.04),
    ("analysisIgnorePreRootHistory", "gtp", True),
    ("genmoveAntiMirror", "gtp", True),
    ("antiMirror", "gtp", False),
    ("analysisPVLen", "gtp", 13),
    ("analysisPVLen", "analysis", 15),
    ("reportAnalysisWinratesAs", "gtp", "SIDETOMOVE"),
    ("logToStderr", "gtp", False),
    ("logToStderr", "analysis", True),
    ("resignConsecTurns", "gtp", 3),
    ("resignMinScoreDifference", "gtp", -1e10),
    ("dynamicPlayoutDoublingAdvantageCapPerOppLead", "gtp", 0.045),
    ("delayMoveMax", "gtp", 1e6),
    ("nnCacheSizePowerOfTwo", "gtp", 20),
    ("nnCacheSizePowerOfTwo", "analysis", 23),
    ("nnMutexPoolSizePowerOfTwo", "analysis", 17),
    ("nnMaxBatchSize", "gtp", 8),
    ("nnRandomize", "gtp", True),
    ("koRule", "gtp", "POSITIONAL"),
    ("taxRule", "gtp", "NONE"),
    ("komi", "gtp", 7.5),
    ("policyInitAreaProp", "selfplay", 0.04),
    ("compensateKomiVisits", "selfplay", 20),
    ("estimateLeadVisits", "selfplay", 6),
    ("komiBigStdev", "selfplay", 10.0),
    ("komiBiggerStdev", "selfplay", 30.0),
    ("forkCompensateKomiProb", "selfplay", 0.0),
]


@pytest.mark.parametrize("key,mode,expected", MODE_DEFAULTS)
def test_mode_defaults(key, mode, expected):
    assert config_keys.default_value(key, mode) == expected


@pytest.mark.parametrize("settings,key,expected", [
    ({"rootNoiseEnabled": "true"}, "rootFpuReductionMax", 0.0),
    ({"rootPolicyTemperature": "1.3"}, "rootPolicyTemperatureEarly", 1.3),
    ({"fpuLossProp": "0.5"}, "rootFpuLossProp", 0.5),
    ({"policyOptimism": "0.1"}, "rootPolicyOptimism", 0.1),
    ({"antiMirror": "false"}, "genmoveAntiMirror", False),
    ({"scoringRule": "TERRITORY"}, "taxRule", "SEKI"),
    ({"scoringRule": "TERRITORY"}, "komi", 6.5),
    ({"hasButton": "true"}, "komi", 7.0),
    ({"numSearchThreads": "13"}, "nnMaxBatchSize", 16),
    ({"numSearchThreads": "40"}, "nnMaxBatchSize", 40),
    ({"handicapCompensateKomiProb": "0.5"}, "sgfCompensateKomiProb", 0.5),
])
def test_derived_defaults_follow_other_keys(settings, key, expected):
    assert Config(settings, mode="gtp").get(key) == expected


def test_unknown_mode_is_rejected():
    with pytest.raises(ValueError, match="unknown config mode"):
        config_keys.default_value("maxVisits", mode="match")


# --------------------------------------------------------------------------- registry integrity

# Defaults KataGo deliberately puts outside the settable range, meaning "off".
SENTINEL_DEFAULTS = {
    "futileVisitsThreshold", "resignMinScoreDifference", "numExtraBlackFixed", "cheapSearchVisits",
    "reducedVisitsMin", "reduceVisitsThreshold",
}


def _all_mode_defaults(spec):
    for mode in config_keys.MODES:
        default = spec.default_for(mode)
        if default is not None and not isinstance(default, DerivedDefault):
            yield mode, default


@pytest.mark.parametrize("spec", config_keys.all_specs(), ids=lambda s: s.name)
def test_spec_is_consistent(spec):
    assert spec.section and spec.description and "\n" not in spec.description
    assert set(spec.mode_defaults) <= set(config_keys.MODES)
    assert spec.required_in <= set(config_keys.MODES)
    for mode, default in _all_mode_defaults(spec):
        values = default if isinstance(default, tuple) else (default,)
        for value in values:
            lo, hi = spec.bounds_for(mode)
            if spec.kind in (ValueKind.INT, ValueKind.FLOAT, ValueKind.LIST_INT, ValueKind.LIST_FLOAT):
                assert isinstance(value, (int, float)) and not isinstance(value, bool)
                if spec.name not in SENTINEL_DEFAULTS:
                    assert (lo is None or value >= lo) and (hi is None or value <= hi), (mode, value)
            elif spec.kind in (ValueKind.BOOL, ValueKind.LIST_BOOL):
                assert isinstance(value, bool)
            elif spec.kind is ValueKind.ENABLED:
                assert isinstance(value, Enabled)
            if spec.choices is not None:
                assert value in spec.choices


def test_registry_sections_are_grouped():
    names = config_keys.sections()
    for expected in ["Logging", "Rules", "Search limits", "Threads", "Root noise and policy temperature",
                     "Neural net and GPU", "Self-play runner", "Self-play training data"]:
        assert expected in names
    assert sum(len(config_keys.specs_in_section(name)) for name in names) == len(config_keys.REGISTRY)


@pytest.mark.parametrize("key,template", [
    ("cudaDeviceToUseModel1Thread3", "[cuda]DeviceToUse[Model<M>][Thread<N>]"),
    ("gpuToUse", "[cuda]DeviceToUse[Model<M>][Thread<N>]"),
    ("maxBoardXSizeForNNBuffer1", "maxBoard[X|Y]SizeForNNBuffer<N>"),
    ("autoAvoidRepeatMinTurnNumber13x13", "autoAvoidRepeat<Min|Max>TurnNumber<X>x<Y>"),
    ("autoAvoidRepeatLambda9x9", "autoAvoidRepeatLambda<X>x<Y>"),
    ("avoidSgfPatternUtility1", "avoidSgf<N>PatternUtility"),
    ("avoidSgf12PatternLambda", "avoidSgf<N>PatternLambda"),
    ("openclGpuToUse", "<otherBackend>..."),
])
def test_families(key, template):
    spec = config_keys.get_spec(key)
    assert spec.name == key
    assert any(family.template.name == template and family.matches(key) for family in config_keys.FAMILIES)


# --------------------------------------------------------------------------- shipped configs

_COMMENTED_SETTING = re.compile(r"^#\s*([A-Za-z0-9_-]+)\s*=\s*(.+)$")

# Commented-out settings in the shipped configs that show an example value
# rather than the default (their comments say so).
ILLUSTRATIVE_VALUES = {
    ("gtp_example.cfg", "logDirDated"), ("gtp_example.cfg", "logFile"), ("gtp_example.cfg", "ignoreGTPAndForceKomi"),
    ("gtp_example.cfg", "defaultBoardSize"), ("gtp_example.cfg", "resignMinScoreDifference"),
    ("gtp_example.cfg", "playoutDoublingAdvantagePla"), ("gtp_example.cfg", "maxPlayouts"),
    ("gtp_example.cfg", "maxTime"), ("gtp_example.cfg", "maxVisitsPondering"),
    ("gtp_example.cfg", "maxPlayoutsPondering"), ("gtp_example.cfg", "cudaDeviceToUse"),
    ("gtp_example.cfg", "cudaDeviceToUseThread0"), ("gtp_example.cfg", "cudaDeviceToUseThread1"),
    ("gtp_example.cfg", "searchRandSeed"), ("gtp_example.cfg", "antiMirror"),
    ("gtp_example.cfg", "avoidSgfPatternDirs"), ("gtp_example.cfg", "avoidSgfPatternUtility"),
    ("gtp_example.cfg", "avoidSgfPatternAllowedNames"), ("gtp_example.cfg", "autoAvoidRepeatDir"),
    ("gtp_example.cfg", "autoAvoidRepeatUtility"), ("gtp_example.cfg", "autoAvoidRepeatLambda"),
    ("gtp_example.cfg", "autoAvoidRepeatMinTurnNumber"), ("gtp_example.cfg", "autoAvoidRepeatMaxTurnNumber"),
    ("gtp_example.cfg", "autoAvoidRepeatMaxPoses"), ("gtp_example.cfg", "homeDataDir"),
    ("analysis_example.cfg", "logDirDated"), ("analysis_example.cfg", "logFile"),
    ("analysis_example.cfg", "maxTime"), ("analysis_example.cfg", "cudaDeviceToUseThread0"),
    ("analysis_example.cfg", "cudaDeviceToUseThread1"),
    ("selfplay_example.cfg", "komiMean"), ("selfplay_example.cfg", "startPosesFromSgfDir"),
    ("selfplay_example.cfg", "hintPosesDir"), ("selfplay_example.cfg", "startPosesSgfExcludes"),
    ("selfplay_example.cfg", "cudaDeviceToUse"),
}


def _commented_settings(name):
    for line in (CONFIG_DIR / name).read_text().splitlines():
        match = _COMMENTED_SETTING.match(line.strip())
        if match:
            key, rest = match.groups()
            yield key, rest.split("#", 1)[0].strip()


@pytest.mark.parametrize("name,mode", SHIPPED_CONFIGS)
def test_shipped_config_loads_without_warnings(name, mode, capsys):
    cfg = Config.from_file(CONFIG_DIR / name, mode=mode)
    assert cfg.warn_unknown_keys() == []
    assert capsys.readouterr().err == ""
    for key in cfg.keys():
        cfg.get(key)  # every value parses and is in range


@pytest.mark.parametrize("name,mode", SHIPPED_CONFIGS)
def test_shipped_config_commented_settings_show_defaults(name, mode):
    seen = 0
    for key, text in _commented_settings(name):
        assert config_keys.is_known(key), key
        if key in ("koRule", "scoringRule", "taxRule", "multiStoneSuicideLegal", "hasButton", "friendlyPassOk",
                   "whiteHandicapBonus"):
            continue  # shown as alternatives to `rules`, checked against the Rules defaults elsewhere
        value = Config({key: text}, mode=mode).get(key)
        if (name, key) not in ILLUSTRATIVE_VALUES:
            expected = Config({"numSearchThreads": "6"} if mode == "gtp" else {}, mode=mode).get(key)
            if isinstance(expected, float):
                assert value == pytest.approx(expected), key
            else:
                assert value == expected, key
        seen += 1
    assert seen > 5


def test_selfplay_example_has_every_required_selfplay_key():
    cfg = Config.from_file(CONFIG_DIR / "selfplay_example.cfg", mode="selfplay")
    required = [spec.name for spec in config_keys.all_specs() if "selfplay" in spec.required_in]
    assert required and [key for key in required if key not in cfg] == []
