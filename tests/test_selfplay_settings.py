"""Self-play settings: the shipped config loads, and bad key combinations fail with clear errors."""
from __future__ import annotations

import math

import pytest

from katacli.config import Config, ConfigError
from katacli.game.rules import KoRule, ScoringRule
from katacli.selfplay.settings import SelfplaySettings

from support.selfplay import EXAMPLE_CONFIG, tiny_config, tiny_settings


def settings_with(overrides) -> SelfplaySettings:
    """Overrides as "k=v,k=v" text, or a dict (list values contain commas, which override text cannot)."""
    if isinstance(overrides, dict):
        cfg = tiny_config()
        cfg.apply_overrides(overrides)
        return SelfplaySettings.from_config(cfg)
    return tiny_settings(overrides)


def test_shipped_example_config_loads():
    cfg = Config.from_file(EXAMPLE_CONFIG, mode="selfplay")
    s = SelfplaySettings.from_config(cfg)
    assert s.runner.num_game_threads == 32 and s.search.max_visits == 600
    assert s.play.cheap_search_prob == 0.75 and s.play.cheap_search_visits == 100
    assert s.game.komi_auto and set(s.game.ko_rules) == {KoRule.SIMPLE, KoRule.POSITIONAL, KoRule.SITUATIONAL}
    assert math.isclose(sum(s.game.board_size_weights), 1.0)
    assert (19, 19) in s.game.board_sizes and (9, 19) in s.game.board_sizes  # allowRectangleProb pairs sizes
    assert cfg.unknown_keys() == []


def test_board_size_weights_follow_katago():
    s = settings_with({"bSizes": "9,13", "bSizeRelProbs": "1,3", "allowRectangleProb": "0.5", "dataBoardLen": "13"})
    weights = dict(zip(s.game.board_sizes, s.game.board_size_weights))
    # Squares keep (1-r) of their weight plus r * p_i^2; rectangles get r * p_i * p_j.
    assert weights[(9, 9)] == pytest.approx(0.5 * 0.25 + 0.5 * 0.0625)
    assert weights[(9, 13)] == pytest.approx(0.5 * 0.25 * 0.75)
    assert weights[(13, 13)] == pytest.approx(0.5 * 0.75 + 0.5 * 0.5625)
    xy = settings_with({"bSizes": "", "allowRectangleProb": "", "bSizesXY": "7-9,9-7", "bSizeRelProbs": "1,1"})
    assert xy.game.board_sizes == ((7, 9), (9, 7))


@pytest.mark.parametrize("overrides, message", [
    ("bSizesXY=7-7", "exactly one of bSizes"),
    ("bSizes=,allowRectangleProb=", "exactly one of bSizes"),
    ({"bSizes": "7,9"}, "one weight per size"),
    ("bSizeRelProbs=0", "positive"),
    ("bSizes=,allowRectangleProb=0.1,bSizesXY=7-7", "allowRectangleProb cannot be combined"),
    ("komiAuto=true", "exactly one of komiMean"),
    ("komiMean=", "exactly one of komiMean"),
    ("scoringRules=TERRITORY,hasButtons=true", "hasButtons"),
    ("bSizes=11", "dataBoardLen"),
    ("policySurpriseDataWeight=0.8,valueSurpriseDataWeight=0.5", "must not exceed 1.0"),
    ({"scoringRules": "AREA,TERRITORY", "taxRules": ""}, "taxRules"),
    ("cheapSearchVisits=50", "cheapSearchVisits"),
    ("forkGameMinChoices=5,forkGameMaxChoices=3", "forkGameMinChoices"),
    ("normalAsymmetricPlayoutProb=0.5,maxAsymmetricRatio=8", "maxAsymmetricRatio"),
    ("useReanalyze=true", "not supported"),
    ("startPosesProb=0.5", "needs startPosesFromSgfDir"),
    ("hintPosesProb=0.5", "needs hintPosesDir"),
    ("startPosesFromSgfDir=/nonexistent-katacli-dir", "does not exist"),
    ("koRules=WEIRD", "koRules"),
    ("maxVisits=", "maxVisits must be set"),
])
def test_bad_combinations_are_refused(overrides, message):
    with pytest.raises(ConfigError, match=message):
        settings_with(overrides)


def example_with(override: str) -> SelfplaySettings:
    cfg = Config.from_file(EXAMPLE_CONFIG, mode="selfplay")
    cfg.apply_overrides(override)
    return SelfplaySettings.from_config(cfg)


def suggested_override(message: str) -> str:
    marker = 'A consistent setting: -override-config "'
    assert marker in message, message
    return message.split(marker, 1)[1].rstrip('"')


@pytest.mark.parametrize("lowered", ["maxVisits=50", "maxVisits=4", "maxVisits=50,cheapSearchVisits=3",
                                     "maxVisits=40,maxPlayouts=30"])
def test_lowering_visits_reports_every_conflict_and_a_line_that_works(lowered):
    with pytest.raises(ConfigError) as caught:
        example_with(lowered)
    message = str(caught.value)
    assert "\n" not in message
    if lowered == "maxVisits=50":  # both dependent keys at once, not one per attempt
        assert message.startswith("2 problems") and "cheapSearchVisits (100)" in message and "reducedVisitsMin (100)" in message
    fixed = example_with(lowered + "," + suggested_override(message))
    limit = min(fixed.search.max_visits, fixed.search.max_playouts)
    assert fixed.play.cheap_search_visits <= limit and fixed.play.reduced_visits_min <= limit


def test_asymmetric_ratio_that_only_rarely_starves_a_side_is_accepted_as_katago_does():
    # 2 * 20 / (8 + 1) rounds to 4 visits only for the largest draws of the doubling; KataGo starts.
    s = example_with("maxVisits=20,cheapSearchVisits=20,reducedVisitsMin=20,normalAsymmetricPlayoutProb=1")
    assert s.play.max_asymmetric_ratio == 8.0


def test_required_keys_are_enforced():
    cfg = tiny_config("numGameThreads=")
    with pytest.raises(ConfigError, match="numGameThreads"):
        SelfplaySettings.from_config(cfg)


def test_legacy_side_position_key():
    assert settings_with("sidePositionProb=,forkSidePositionProb=0.3").play.side_position_prob == 0.3


def test_rules_lists_parse():
    s = settings_with({"koRules": "SIMPLE", "scoringRules": "AREA", "taxRules": "NONE", "hasButtons": "true,false",
                       "multiStoneSuicideLegals": "true"})
    assert s.game.ko_rules == (KoRule.SIMPLE,) and s.game.scoring_rules == (ScoringRule.AREA,)
    assert s.game.has_buttons == (True, False)
