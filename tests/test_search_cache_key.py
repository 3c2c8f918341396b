"""The search's NN cache key is KataGo's (NNInputs::getHash): the situation and the feature flags, not the recent
moves. KataGo shares one evaluation between transpositions whose move histories differ; a key with the moves
made kata evaluate such a transposition again, and its value (from other history features) then differed from
the one KataGo's search used (found by benchmarks/compare_katago_search.py on 9x9-tromp-m44 at 46 visits:
F1 E1 G1 H1 was evaluated first, G1 H1 F1 E1 reused it in KataGo and was evaluated anew in kata)."""
from katacli._core.game_state import GameState
from katacli._core.search_tree import SearchTree
from katacli.search import SearchParams

SIZE = 9
BLACK, WHITE = 1, 2


def _state(moves) -> GameState:
    state = GameState(SIZE)
    for pla, xy in moves:
        state.play(xy, pla)
    return state


def _root_key(state: GameState) -> int:
    tree = SearchTree(SIZE, SIZE, 1)
    tree.configure(SearchParams())
    tree.set_root(state)
    assert tree.prepare_root_eval() == 1
    return tree.leaf_info(0)[0]


def test_transpositions_with_different_move_orders_share_a_key():
    first = _state([(BLACK, (2, 2)), (WHITE, (6, 6)), (BLACK, (2, 6)), (WHITE, (6, 2))])
    transposed = _state([(BLACK, (2, 6)), (WHITE, (6, 2)), (BLACK, (2, 2)), (WHITE, (6, 6))])
    assert _root_key(first) == _root_key(transposed)


def test_a_pass_that_would_end_the_phase_changes_the_key():
    # Same stones, White to move in both; only after Black's pass would White's pass end the phase.
    after_pass = _state([(BLACK, (4, 4)), (WHITE, (3, 3)), (BLACK, None)])
    no_pass = _state([(BLACK, None), (WHITE, (3, 3)), (BLACK, (4, 4))])
    assert after_pass.next_player == no_pass.next_player == WHITE
    assert _root_key(after_pass) != _root_key(no_pass)


def test_other_positions_have_other_keys():
    one = _state([(BLACK, (2, 2)), (WHITE, (6, 6))])
    other = _state([(BLACK, (2, 2)), (WHITE, (6, 5))])
    assert _root_key(one) != _root_key(other)
