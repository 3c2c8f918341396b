"""Anti-mirror play (antiMirror, genmoveAntiMirror), KataGo's semantics: detecting an opponent who
mirrors every move through the centre, the search's nudges towards breaking the mirror (centre,
mirror answers searched hard), the centre-ownership shift of leaf evaluations, and nothing at all
with the key off or without a mirroring opponent."""
import random

from katacli._core.game_state import GameState
from katacli._core import search_results as sr
from katacli.search import Searcher
from support.fakes import MaterialEvaluator

from test_search_core import BLACK, WHITE, plain_params

SIZE = 19
CENTER = (SIZE // 2, SIZE // 2)
# KataGo calls it mirroring once at least 7 + half of the opponent's moves mirrored: 14 of 14.
PAIRS_DETECTED = 14
VISITS = 400


def mirror(move):
    return None if move is None else (SIZE - 1 - move[0], SIZE - 1 - move[1])


def play_mirrored_pairs(state, pairs, rng, used, first=None):
    """Black plays random free points (``first`` first), White answers each with its mirror."""
    for index in range(pairs):
        move = first if index == 0 and first is not None else CENTER
        while move == CENTER or move in used or mirror(move) in used:
            move = (rng.randrange(SIZE), rng.randrange(SIZE))
        used |= {move, mirror(move)}
        state.play(move, BLACK)
        state.play(mirror(move), WHITE)


def mirrored_game(pairs, seed=1, last_reply_mirrored=True):
    """A 19x19 game (komi 7.5, area scoring) where White mirrored Black ``pairs`` times (but the last time
    when not last_reply_mirrored)."""
    state = GameState(SIZE)
    used = set()
    play_mirrored_pairs(state, pairs - 1, random.Random(seed), used)
    if last_reply_mirrored:
        play_mirrored_pairs(state, 1, random.Random(seed + 1), used)
    else:
        move = next((x, 1) for x in range(SIZE) if (x, 1) not in used and mirror((x, 1)) not in used)
        state.play(move, BLACK)
        state.play(next((x, 0) for x in range(SIZE) if (x, 0) not in used), WHITE)
    return state


def searched(state, anti_mirror, evaluator=None, visits=VISITS):
    searcher = Searcher(state, plain_params(anti_mirror=anti_mirror), evaluator or MaterialEvaluator(), seed=3)
    searcher.run(max_visits=visits)
    return searcher


def visits_of(tree, move, path=()):
    return next((d["visits"] for d in sr.analysis_data(tree, 1, path=path) if d["move"] == move), 0)


def test_a_mirroring_opponent_is_detected_after_enough_mirrored_moves():
    state = mirrored_game(PAIRS_DETECTED)
    tree = searched(state, True, visits=2).tree
    assert tree.mirroring_player == WHITE
    # Area scoring on an odd board, no handicap: Black gets the last move's point back, White keeps komi - 1.
    assert tree.mirror_advantage == 6.5
    assert searched(mirrored_game(PAIRS_DETECTED - 1), True, visits=2).tree.mirroring_player == 0
    # Enough mirrored moves, but the last one was not.
    late = mirrored_game(PAIRS_DETECTED + 3, last_reply_mirrored=False)
    assert searched(late, True, visits=2).tree.mirroring_player == 0
    assert searched(state, False, visits=2).tree.mirroring_player == 0


def test_against_a_mirror_the_search_breaks_it_and_searches_mirror_answers_hard():
    state = mirrored_game(PAIRS_DETECTED)
    on, off = searched(state, True), searched(state, False)
    # KataGo sends a share of the root's playouts to the centre, the one point a mirror cannot answer.
    assert visits_of(on.tree, CENTER) >= 0.05 * VISITS > visits_of(off.tree, CENTER)
    best = on.best_move()
    assert best != off.best_move() and best != CENTER
    # Below our move, the opponent's mirror answer takes most playouts.
    replies = sr.analysis_data(on.tree, 1, path=[best])
    assert replies[0]["move"] == mirror(best) and replies[0]["visits"] >= 0.5 * sum(r["visits"] for r in replies)


def test_without_a_mirroring_opponent_the_key_changes_nothing():
    state = mirrored_game(PAIRS_DETECTED - 1)
    on, off = searched(state, True), searched(state, False)
    assert sr.analysis_data(on.tree, 5) == sr.analysis_data(off.tree, 5)
    assert on.root_values() == off.root_values()


class CenterOwnershipEvaluator(MaterialEvaluator):
    """Material values, and White owning the centre point."""

    def _one(self, request):
        output = super()._one(request)
        output.white_ownership[(request.board_y // 2) * request.board_x + request.board_x // 2] = 1.0
        return output


def test_when_the_mirroring_side_holds_the_centre_evaluations_lean_on_its_ownership():
    # White took the centre, then mirrored every move: the difficult case, komi favouring White.
    state = GameState(SIZE)
    state.play((3, 3), BLACK)
    state.play(CENTER, WHITE)
    play_mirrored_pairs(state, PAIRS_DETECTED + 1, random.Random(4), {(3, 3), mirror((3, 3))})
    on = searched(state, True, CenterOwnershipEvaluator(), visits=60)
    off = searched(state, False, CenterOwnershipEvaluator(), visits=60)
    assert on.tree.mirroring_player == WHITE
    raw_on, raw_off = on.root_raw_values(), off.root_raw_values()
    assert raw_on["win"] > raw_off["win"] and raw_on["win"] + raw_on["loss"] == raw_off["win"] + raw_off["loss"]
