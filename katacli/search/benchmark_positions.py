"""The positions a benchmark searches: taken from one game record, spread evenly over the game.

By default the game is one of the bundled ones (``katacli/resources/benchmark_games.sgf``, one game per
board size 7..19, played by a real network; see scripts/make_benchmark_games.py). A user's own SGF
works too (``kata benchmark -sgf FILE``). As in KataGo, the SGF's rules are ignored except for komi:
positions are searched under Tromp-Taylor rules, so results compare across games.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from katacli.game.rules import Rules, RulesError
from katacli.game.sgf import SgfError, SgfGame, load_sgf, read_sgf

MIN_BENCHMARK_BOARD_LEN = 7
MAX_BENCHMARK_BOARD_LEN = 19
DEFAULT_BENCHMARK_BOARD_LEN = 19
DEFAULT_NUM_POSITIONS = 10
BENCHMARK_KOMI = 7.5
BENCHMARK_RULES = "tromp-taylor"
BENCHMARK_GAMES_PATH = Path(__file__).resolve().parents[1] / "resources" / "benchmark_games.sgf"


class BenchmarkError(ValueError):
    """A benchmark that cannot be run as asked (unsupported board size, unreadable SGF, bad option)."""


@lru_cache(maxsize=1)
def _bundled_games() -> dict[int, SgfGame]:
    """The bundled games by board size (square boards only)."""
    from sgfmill import sgf_grammar

    try:
        data = BENCHMARK_GAMES_PATH.read_bytes()
    except OSError as exc:
        raise BenchmarkError(f"the bundled benchmark games are missing ({BENCHMARK_GAMES_PATH}): {exc.strerror}; "
                             "reinstall katacli") from None
    games = {}
    for tree in sgf_grammar.parse_sgf_collection(data):
        game = read_sgf(sgf_grammar.serialise_game_tree(tree), file_name=str(BENCHMARK_GAMES_PATH))
        games[game.x_size] = game
    return games


def bundled_game(board_len: int) -> SgfGame:
    """The bundled game for a board_len x board_len board."""
    if not MIN_BENCHMARK_BOARD_LEN <= board_len <= MAX_BENCHMARK_BOARD_LEN:
        raise BenchmarkError(f"no built-in benchmark positions for board size {board_len} (supported: "
                             f"{MIN_BENCHMARK_BOARD_LEN} to {MAX_BENCHMARK_BOARD_LEN})")
    return _bundled_games()[board_len]


def load_game(path: str) -> SgfGame:
    """A user's SGF file, with a clean error for an unreadable one."""
    try:
        return load_sgf(path)
    except SgfError as exc:
        raise BenchmarkError(str(exc)) from None


def spread_move_numbers(num_moves: int, count: int) -> list[int]:
    """``count`` move numbers (moves played before the position) spread evenly over a game of num_moves moves,
    each in the middle of its share of the game: opening, middle game and endgame all get searched."""
    if num_moves <= 0:
        return [0]
    count = min(count, num_moves)
    return sorted({(2 * k + 1) * num_moves // (2 * count) for k in range(count)})


def benchmark_rules(game: SgfGame) -> Rules:
    rules = Rules.preset(BENCHMARK_RULES)
    if game.komi is not None:
        try:
            rules = rules.with_komi(game.komi)
        except RulesError:
            pass  # an unusable komi: keep the ruleset's own
    return rules


def positions_from_game(game: SgfGame, count: int) -> list:
    """GameStates after each of the chosen move numbers (copies; the caller may search them freely)."""
    from katacli.game.session import GameSession, SessionError

    if count < 1:
        raise BenchmarkError(f"the number of positions must be at least 1, got {count}")
    try:
        session = GameSession(game.x_size, game.y_size, rules=benchmark_rules(game))
        if game.setup:
            session.set_position([(c, xy) for c, xy in game.setup if c != 0], game.first_player)
    except SessionError as exc:
        raise BenchmarkError(f"cannot benchmark on this game: {exc}") from None
    wanted = spread_move_numbers(len(game.moves), count)
    positions = []
    for move_number in range(wanted[-1] + 1):
        if move_number in wanted:
            positions.append(session.state.copy())
        if move_number == wanted[-1]:
            break
        player, xy = game.moves[move_number]
        try:
            session.play(player, xy)
        except Exception as exc:  # an illegal move in the record
            raise BenchmarkError(f"illegal move {move_number + 1} in the SGF: {exc}") from None
    return positions


def benchmark_positions(board_len: int, count: int = DEFAULT_NUM_POSITIONS) -> list:
    """Positions from the bundled game for this board size (what `kata-benchmark` and `kata benchmark` search)."""
    return positions_from_game(bundled_game(board_len), count)
