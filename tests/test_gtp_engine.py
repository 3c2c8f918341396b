"""The engine's behaviour around the search: pondering, cancelling, background model loading,
resigning, cleanup before passing, scoring with a network, and what reaches the search."""
from __future__ import annotations

import threading
import time

import pytest

from katacli.gtp.engine import ModelLoader
from katacli.gtp.errors import EngineStartupError
from katacli.gtp.search_types import SearchOutcome
from support.gtp import ScriptedBot, feed, make_engine

WAIT = 10.0


def session(lines, **kwargs) -> tuple[object, str]:
    engine, out, _ = make_engine(**kwargs)
    feed(engine, lines)
    engine.stop_background()
    return engine, out.getvalue()


def replies(text: str) -> list[str]:
    return [block for block in text.split("\n\n") if block]


# --------------------------------------------------------------------------- what the search is asked


def test_settings_and_clocks_reach_the_search():
    engine, text = session(["boardsize 9", "kata-set-param maxVisits 7", "time_settings 60 5 1", "genmove b",
                            "kata-analyze w 10 avoid w E5,pass 3"])
    genmove, analyze = engine.bot.requests
    assert genmove.params.max_visits == 7 and genmove.pla == 1
    assert genmove.clock.original_main_time == 60 and genmove.clock.num_stones_per_period == 1
    assert genmove.report_interval is None
    assert analyze.pla == 2 and analyze.clock is None and analyze.report_interval == pytest.approx(0.1)
    assert analyze.avoid == {2: {(4, 4): 3, None: 3}}
    assert analyze.params.wide_root_noise == engine.params.analysis.wide_root_noise


def test_pondering_runs_between_commands_and_stops_on_the_next_line():
    engine, out, _ = make_engine(override="ponderingEnabled=true")
    feed(engine, ["boardsize 9", "play b E5"])
    task = engine.background
    assert task is not None and task.thread.is_alive()  # pondering for White
    assert engine.bot.requests[-1].pla == 2 and engine.bot.requests[-1].report_interval is None
    feed(engine, ["genmove w"])
    assert not task.thread.is_alive()
    assert replies(out.getvalue())[-1] == "= E6"  # nearest the centre, top row first
    assert engine.background is not None  # pondering again after our move
    engine.stop_background()


def pondering_then(line: str):
    """(engine, its ponder task) after ``line`` arrived while the engine pondered White's reply to E5."""
    engine, _, _ = make_engine(override="ponderingEnabled=true")
    feed(engine, ["boardsize 9", "komi 7.5", "play b E5"])
    task = engine.background
    feed(engine, [line])
    return engine, task


@pytest.mark.parametrize("line", ["name", "showboard", "list_commands", "kata-get-param maxVisits",
                                  "kata-debug-print-tc", "time_left b 30 0", "kgs-time_settings byoyomi 0 5 3",
                                  "komi 7.5", "", "no_such_command", "12"])
def test_pondering_goes_on_through_commands_that_leave_the_game_alone(line):
    # As KataGo: a GUI's query during the opponent's turn must not throw the pondering away (nor restart it).
    engine, task = pondering_then(line)
    assert engine.background is task and task.thread.is_alive()
    assert len(engine.bot.requests) == 1
    engine.stop_background()


@pytest.mark.parametrize("line", ["komi 6.5", "play w E6", "undo", "clear_board", "kata-set-param maxVisits 5",
                                  "genmove w", "stop", "clear_cache", "kata-analyze w 10"])
def test_commands_that_change_or_search_the_game_stop_pondering(line):
    engine, task = pondering_then(line)
    assert not task.thread.is_alive()
    engine.stop_background()


def test_an_illegal_play_ponders_on_as_in_katago():
    engine, out, _ = make_engine(override="ponderingEnabled=true")
    feed(engine, ["boardsize 9", "play b E5", "stop", "play w E5"])
    assert replies(out.getvalue())[-1] == "? illegal move"
    assert engine.pondering
    engine.stop_background()


def test_pondering_shortens_by_the_last_genmove_search_factor():
    # searchFactorWhenWinning cut the genmove; KataGo's ponder(lastSearchFactor) cuts pondering the same way.
    engine, out, _ = make_engine(override="ponderingEnabled=true")
    feed(engine, ["boardsize 9", "play b E5"])
    engine.stats.last_search_factor = 0.4
    feed(engine, ["play w E6", "play b D4"])
    assert engine.bot.requests[-1].search_factor == pytest.approx(0.4)
    engine.stop_background()


def test_set_param_applies_to_the_next_ponder():
    # KataGo's kata-set-param sets the bot's parameters at once, so pondering after it uses them.
    engine, out, _ = make_engine(override="ponderingEnabled=true,maxTimePondering=60,maxVisits=20,searchRandSeed=3",
                                 scripted=False)
    feed(engine, ["boardsize 7", "genmove b", "kata-set-param maxTimePondering 0"])
    assert engine.bot._searcher.params.max_time_pondering == 0.0
    feed(engine, ["play w D5"])
    assert engine.background is not None and engine.background.done.wait(WAIT)   # ponders 0 s: ends at once
    engine.stop_background()


def test_pondering_with_the_real_search():
    engine, out, _ = make_engine(override="ponderingEnabled=true,maxVisits=30,searchRandSeed=5", scripted=False)
    feed(engine, ["boardsize 7", "play b D4"])
    time.sleep(0.2)  # let it ponder a little
    feed(engine, ["genmove w", "genmove b"])
    engine.stop_background()
    assert [r[:1] for r in replies(out.getvalue())] == ["="] * 4


class BlockingBot(ScriptedBot):
    """Searches until stopped."""

    def genmove(self, request, stop, on_snapshot=None):
        assert stop.wait(WAIT)
        return super().genmove(request, stop, on_snapshot)


def test_cancellable_searches_answer_cancelled():
    engine, out, _ = make_engine()
    engine.options.make_bot = BlockingBot
    for line in ["boardsize 9", "4 kata-search_cancellable b", "5 name", "kata-search_analyze_cancellable b 10",
                 "", "showboard"]:
        engine.handle_line(line + "\n")  # straight in: feed() would wait for the search to finish
    text = out.getvalue()
    assert text.startswith("= \n\n=4 cancelled\n\n=5 KataGo\n\n=\n")
    assert "\nplay cancelled\n\n= MoveNum: 0 " in text


def test_searching_for_the_other_side_makes_it_the_side_to_move():
    # KataGo's bot clears its history for the side it is asked to search for (setPlayerAndClearHistory):
    # showboard then counts no moves, a colourless analyze goes on for that side, and undo replays the game.
    engine, text = session(["boardsize 9", "play b E5", "play w C3", "kata-analyze w 10", "showboard",
                            "kata-analyze 10", "kata-search b", "showboard", "undo", "showboard"])
    first, colourless, search = engine.bot.requests[:3]
    assert (first.pla, colourless.pla, search.pla) == (2, 2, 1)
    boards = [block for block in replies(text) if "MoveNum" in block]
    assert [b.split()[2] for b in boards] == ["0", "0", "1"]
    assert ["Next player: White" in b for b in boards] == [True, False, True]


# --------------------------------------------------------------------------- the network loads in the background


def test_identity_commands_do_not_wait_for_the_model_but_others_do():
    gate = threading.Event()
    engine, out, _ = make_engine()
    engine.loader = ModelLoader(lambda: gate.wait(WAIT) and None)
    feed(engine, ["1 name", "2 protocol_version", "3 known_command genmove"])
    assert not engine.loader.ready  # answered while the network is still loading (the gate is shut)
    assert out.getvalue() == "=1 KataGo\n\n=2 2\n\n=3 true\n\n"
    worker = threading.Thread(target=feed, args=(engine, ["4 boardsize 9"]))
    worker.start()
    time.sleep(0.2)
    assert "=4" not in out.getvalue()  # still waiting for the network
    gate.set()
    worker.join(WAIT)
    assert out.getvalue().endswith("=4 \n\n")


def test_a_model_that_fails_to_load_stops_the_engine():
    def broken():
        raise ValueError("not a KataGo model")

    engine, out, _ = make_engine()
    engine.loader = ModelLoader(broken)
    feed(engine, ["name"])
    with pytest.raises(EngineStartupError, match="not a KataGo model"):
        feed(engine, ["boardsize 9"])


# --------------------------------------------------------------------------- move decisions


class LosingBot(ScriptedBot):
    """White is winning by a lot."""

    def genmove(self, request, stop, on_snapshot=None):
        outcome = super().genmove(request, stop, on_snapshot)
        return SearchOutcome(move=outcome.move, win_loss=0.99, lead=40.0, visits=16)


def test_resigns_when_hopeless_and_allowed():
    engine, out, _ = make_engine(override="allowResignation=true,resignThreshold=-0.9,resignConsecTurns=2")
    engine.options.make_bot = LosingBot
    feed(engine, ["boardsize 9", "genmove b", "genmove b", "kata-genmove_analyze b 10", "kata-set-param "
                  "allowResignation false", "genmove b"])
    assert [r.split("\n")[-1] for r in replies(out.getvalue())] == [
        "= ", "= E5", "= resign", "play resign", "= ", "= E6"]


class PassingBot(ScriptedBot):
    def genmove(self, request, stop, on_snapshot=None):
        return SearchOutcome(move=None, win_loss=-0.5, lead=-10.0, visits=16)


@pytest.mark.parametrize("rules, expected", [("tromp-taylor", "= B5"), ("chinese", "= pass")])
def test_cleanup_before_pass_captures_dead_stones_in_our_area(rules, expected):
    engine, out, _ = make_engine()
    engine.options.make_bot = PassingBot
    feed(engine, ["boardsize 5", f"kata-set-rules {rules}",
                  "set_position b A4 b B4 b C4 b D4 b E4 b C5 w A5", "genmove b"])
    assert replies(out.getvalue())[-1] == expected


# --------------------------------------------------------------------------- scoring


def test_scoring_with_a_network_uses_the_search_estimates():
    engine, out, _ = make_engine()
    engine.loader = ModelLoader(lambda: object())  # "a network": the scripted bot does the estimating
    feed(engine, ["boardsize 5", "play b C3", "play w D3", "final_score", "final_status_list alive",
                  "final_status_list dead", "komi 7", "final_score"])
    # lead 2.3 rounds to a half-integer result with komi 7.5 and to an integer with komi 7;
    # ownership is all White's, so White lives and Black dies.
    assert replies(out.getvalue())[-5:] == ["= W+2.5", "= D3", "= C3", "= ", "= W+2.0"]


def test_a_finished_chinese_game_is_scored_by_the_lead_estimate():
    engine, out, _ = make_engine()
    engine.loader = ModelLoader(lambda: object())  # the scripted bot: lead 2.3, White owns every point
    feed(engine, ["boardsize 5", "kata-set-rules chinese", "komi 0.5", "play b C3", "play w D3", "play b pass",
                  "play w pass", "final_score", "final_status_list dead", "printsgf"])
    # Chinese rules allow passing with dead stones on the board: as KataGo (computeAnticipatedWinnerAndScore),
    # the score is the rounded lead estimate, not the board as it stands, and printsgf gives the same result.
    answers = replies(out.getvalue())
    assert answers[-3:-1] == ["= W+2.5", "= C3"]
    assert "RE[W+2.5]" in answers[-1]


def test_a_finished_game_is_scored_from_the_history():
    _, text = session(["boardsize 5", "kata-set-rules japanese", "komi 0.5", "play b C3", "play w pass",
                       "play b pass", "final_score", "kata-set-rules tromp-taylor", "final_score"])
    assert replies(text)[-3:] == ["= B+23.5", "= ", "= B+24.5"]  # territory, then area counting


def test_a_nogo_game_ends_when_the_side_to_move_has_no_legal_move():
    engine, out, _ = make_engine(override="maxVisits=8,searchRandSeed=2", scripted=False)
    feed(engine, ["boardsize 3", "kata-set-rules nogo"])
    color = "b"
    for _ in range(3 * 3 + 1):  # the board only fills up, so a 3x3 game has at most 9 moves
        before = len(out.getvalue())
        feed(engine, [f"genmove {color}"])
        if out.getvalue()[before:] == "= resign\n\n":
            break
        color = "w" if color == "b" else "b"
    else:
        pytest.fail("the NoGo game did not end")
    winner = "W" if color == "b" else "B"
    before = len(out.getvalue())
    feed(engine, ["final_score", f"kata-genmove_analyze {color} 10"])
    assert out.getvalue()[before:] == f"= {winner}+R\n\n=\nplay resign\n\n"


def test_showboard_names_nogo_while_playing_it():
    _, text = session(["kata-set-rules nogo", "showboard", "kata-set-rules chinese", "showboard"])
    boards = [reply for reply in replies(text) if "Rules: " in reply]
    assert 'Rules: {"game":"nogo"}' in boards[0]
    assert '"scoring":"AREA"' in boards[1] and "nogo" not in boards[1]


GTP_KEYS = ("numSearchThreads = 1\nlogAllGTPCommunication = false\nlogSearchInfo = false\n"
            "logToStderr = false\n")


@pytest.mark.parametrize("config_text, go_rules", [
    ("rules = nogo\n" + GTP_KEYS, '"ko":"POSITIONAL","scoring":"AREA"'),   # Tromp-Taylor
    ("rules = nogo\nkoRule = SIMPLE\nscoringRule = TERRITORY\nmultiStoneSuicideLegal = false\n"
     + GTP_KEYS, '"ko":"SIMPLE","scoring":"TERRITORY"'),   # the config's own Go rules
    ("rules = nogo\nwhiteHandicapBonus = 0\n" + GTP_KEYS, '"ko":"POSITIONAL","scoring":"AREA"'),   # a partial set
])
def test_a_config_file_can_start_the_engine_in_nogo(config_text, go_rules, tmp_path):
    """`rules = nogo` in a config file (as `kata gtp --help` says): a config needs the rules' keys, which
    the NoGo name used to leave missing, so the engine refused to start."""
    config = tmp_path / "nogo.cfg"
    config.write_text(config_text)
    engine, text = session(["kata-get-rules", "boardsize 5", "genmove b"], config=[str(config)])
    answers = replies(text)
    assert answers[0] == '= {"game":"nogo"}' and answers[2].startswith("= ")
    assert go_rules in engine.rules.to_json_string()   # the Go rules underneath, for komi and a later change


@pytest.mark.parametrize("change", ["kata-set-rules chinese", "kata-set-rule scoring AREA", "kgs-rules chinese"])
def test_a_rules_change_that_forbids_an_earlier_move_is_refused_as_katago(change):
    """A pass for ko in the cleanup phase (D5 on White's stone) is no move at all under area rules: KataGo
    answers that the change is impossible, keeping the new rules and the game up to that move (kata raised an
    internal error with a traceback, and skipped its bookkeeping)."""
    engine, text = session(["boardsize 9", "kata-set-rules japanese", "play B D6", "play W E6", "play B C5",
                            "play W F5", "play B D4", "play W E4", "play B E5", "play W pass", "play B pass",
                            "play W D5", "play B D5", change, "kata-get-rules"], override="preventCleanupPhase=false")
    answers = replies(text)
    assert answers[-2] == ("? Could not make the rules change, some earlier moves in the game would now become "
                           "illegal.")
    assert '"scoring":"AREA"' in answers[-1]
    assert len(engine.session.moves) == 10   # the game up to the move the new rules forbid


def test_rules_a_network_cannot_represent_are_refused():
    engine, out, _ = make_engine(model="test-b4c32.bin.gz")
    feed(engine, ["kata-set-rule ko SPIGHT", "kata-set-rules japanese", "kata-set-rule hasButton true",
                  "kata-get-rules"])
    assert replies(out.getvalue()) == [
        '? Rules {"friendlyPassOk":false,"hasButton":false,"ko":"SPIGHT","scoring":"AREA","suicide":true,'
        '"tax":"NONE","whiteHandicapBonus":"0"} are not supported by this neural net version',
        "= ",
        '? Rules {"friendlyPassOk":false,"hasButton":true,"ko":"SIMPLE","scoring":"TERRITORY","suicide":false,'
        '"tax":"SEKI","whiteHandicapBonus":"0"} are not supported by this neural net version',
        '= {"friendlyPassOk":false,"hasButton":false,"ko":"SIMPLE","scoring":"TERRITORY","suicide":false,'
        '"tax":"SEKI","whiteHandicapBonus":"0"}',
    ]
    _, text = session(["kata-set-rule ko SPIGHT"])  # without a network any rules go
    assert text == "= \n\n"


class BrokenBot(ScriptedBot):
    def genmove(self, request, stop, on_snapshot=None):
        raise RuntimeError("search exploded")


def test_a_failing_search_is_reported_and_the_engine_goes_on():
    engine, out, err = make_engine()
    engine.options.make_bot = BrokenBot
    feed(engine, ["boardsize 5", "1 genmove b", "2 kata-genmove_analyze b 10", "3 name"])
    # After an analysis header only the blank line can end the response; the reason goes to stderr.
    assert out.getvalue() == "= \n\n?1 internal error: search exploded\n\n=2\n\n=3 KataGo\n\n"
    assert "search exploded" in err.getvalue()


@pytest.mark.parametrize("command", ["kata-genmove_analyze b 50 allow b E5,D5 1", "genmove_analyze b 50 allow b E5 1",
                                     "kata-search_analyze b 50 allow b E5 1",
                                     "kata-search_analyze_cancellable b 50 allow b E5 1"])
def test_restrictions_that_leave_no_move_give_no_move_as_katago(command):
    # allow names only occupied points: KataGo ends the response empty ("genmove returned null location or
    # illegal move" on stderr) and plays nothing; a pass answered and played would end a game early.
    engine, out, err = make_engine(scripted=False, override="maxVisits=20,numSearchThreads=1")
    feed(engine, ["boardsize 9", "play b E5", "play w D5", f"7 {command}"])
    if engine.background is not None:   # a cancellable search: let it end before the next line would cancel it
        assert engine.background.done.wait(60)
    feed(engine, ["8 printsgf"])
    text = out.getvalue()
    assert "=7\n\n" in text and "play " not in text, text
    assert text.endswith(";B[ee];W[de])\n\n"), text
    assert "genmove returned null location or illegal move" in err.getvalue()
