"""One match game between two bots, on self-play's machinery.

The start (rules, board size, komi, handicap) comes from self-play's
:class:`~katacli.selfplay.game_init.GameInitializer`; each bot searches with self-play's
:class:`~katacli.selfplay.mcts.MctsSelfplaySearch` on its network's shared batching
evaluator (or with random playouts), keeping its tree between its own moves. Unlike
self-play nothing is recorded for training: a match game is just moves, resignation
as KataGo's bots resign, and a result. A game may start from a start or hint position
(``MatchSettings.positions``); at a hint position's turn the bot to move studies the
hinted move with four times its visits, from a fresh tree, as KataGo's runGame does.
"""
from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from katacli._core.game_state import GameState
from katacli.game.coords import BLACK, WHITE
from katacli.game.handicap import handicap_stones_counting_first_moves
from katacli.game.rules import format_komi, rules_of
from katacli.game.sgf import SgfGame, values_comment, with_passes_for_ko, with_result_comment, write_sgf
from katacli.gtp.resign import ResignSettings
from katacli.match.settings import MATCH_COMPENSATE_KOMI_VISITS, BotSpec, MatchSettings, PolicyOpenings
from katacli.selfplay.game_init import GameInitializer, GameStart
from katacli.selfplay.komi import adjust_komi_to_even
from katacli.selfplay.mcts import SCORE_CENTERING_VISITS, MctsSelfplaySearch
from katacli.selfplay.raw_policy import NetEvaluator
from katacli.selfplay.searching import HINT_VISITS_FACTOR, MAX_HINT_VISITS
from katacli.selfplay.opening import play_extra_black, play_policy_opening
from katacli.data.schema import MODE_NORMAL
from katacli.selfplay.game import game_mode
from katacli.selfplay.output import game_data_comment, passes_for_ko
from katacli.selfplay.settings import PlaySettings

# A game's hash names it in its SGF (KataGo's gameHash); drawn apart from the seeded game randomness, so a
# match with -seed plays the same games.
_HASH_SOURCE = random.SystemRandom()
HASH_BITS = 64
# Handicap stones are placed by the network's policy at this temperature (KataGo's match default).
HANDICAP_TEMPERATURE = 0.5


class _NoNetwork:
    """What a rollout bot's search is given for a network: leaves are evaluated by random playouts."""

    evaluator = None
    model_name = "rollouts"


class MatchBot:
    """One bot's side of one game."""

    def __init__(self, spec: BotSpec, net: Optional[NetEvaluator], rng: random.Random):
        self.spec = spec
        self.net = net
        self.search = MctsSelfplaySearch(net if net is not None else _NoNetwork(), rng)
        self.last_comment = ""   # the last search's values as KataGo comments a match game's move

    def choose(self, state: GameState, hint: Optional[tuple] = None, clear_tree: bool = False) -> tuple:
        """(move, White's win-loss, White's lead, visits) after a search with this bot's settings.

        ``clear_tree``: search from a fresh tree (clearBotBeforeSearch). ``hint``: (move,) at a hint position's turn: four times the visits and playouts, the tree
        cleared, a few visits first to centre the score utility, then the hinted move studied."""
        params = self.spec.params
        searcher = self.search.searcher_at(state, params)
        if clear_tree:
            searcher.clear()
        if hint is None:
            searcher.run()
        else:
            visits = math.ceil(min(MAX_HINT_VISITS, params.max_visits * HINT_VISITS_FACTOR))
            playouts = math.ceil(min(MAX_HINT_VISITS, params.max_playouts * HINT_VISITS_FACTOR))
            searcher.clear()
            if visits > SCORE_CENTERING_VISITS and playouts > SCORE_CENTERING_VISITS:
                searcher.run(max_visits=SCORE_CENTERING_VISITS)
            searcher.set_root_hint(hint[0])   # clears the tree again: the root is noised with the hint
            try:
                searcher.run(max_visits=visits, max_playouts=playouts)
            finally:
                searcher.set_root_hint(None, has_hint=False)
        move = searcher.choose_move()
        values = searcher.root_values(pruned=False) or {"win_loss": 0.0, "lead": 0.0}
        self.last_comment = move_comment(values, searcher.root_visits)
        return move, values["win_loss"], values["lead"], searcher.root_visits


def move_comment(values: Optional[dict], visits: int) -> str:
    """KataGo's comment on a searched move of a match game: White's win, loss and no-result probabilities and
    score mean, then the visits ("0.54 0.46 0.00 1.0 v=8"); only the visits without values (an unsearched root)."""
    if not values or "win" not in values:
        return f"v={visits}"
    return values_comment(values["win"], values["loss"], values["no_result"], values["score_mean"], visits)


@dataclass
class MatchGame:
    black: str
    white: str
    state: GameState          # the final position, scored (or resigned)
    hit_move_limit: bool
    pass_alive_under_suicide: bool = False
    move_comments: dict = field(default_factory=dict)   # move index -> move_comment(), for the searched moves
    # KataGo's game data for the SGF's root comment and the match's move-time log:
    game_hash: tuple[int, int] = (0, 0)
    mode: int = MODE_NORMAL            # handicap, start position, hint ... (katacli.selfplay.game.game_mode)
    start_turn_idx: int = 0            # moves already in the history when the bots began
    initial_turn_number: int = 0
    time_used: tuple[float, float] = (0.0, 0.0)   # Black's and White's search seconds
    moves_made: tuple[int, int] = (0, 0)          # Black's and White's searched moves

    @property
    def winner(self) -> int:
        """BLACK, WHITE, or 0 for a draw or no result."""
        if self.state.is_no_result:
            return 0
        return self.state.winner if self.state.winner in (BLACK, WHITE) else 0

    @property
    def result(self) -> str:
        s = self.state
        if s.is_no_result:
            return "Void"
        if self.winner == 0:
            return "0"
        letter = "B" if self.winner == BLACK else "W"
        return f"{letter}+R" if s.is_resignation else f"{letter}+{format_komi(abs(s.final_white_minus_black_score))}"

    def summary(self, game_number: int) -> str:
        """The game's line in the match log."""
        return (f"game {game_number}: {self.black} (B) vs {self.white} (W): {self.result}"
                f"{' (move limit)' if self.hit_move_limit else ''}")

    def sgf(self) -> str:
        """One SGF line; a pass for ko in the territory-scoring encore is written as KataGo writes it."""
        s = self.state
        # A game stopped at maxMovesPerGame has no RE, as in KataGo's SGFs (scripts that count results must not
        # take it for a win); the comment keeps how kata's own table scored it.
        comment = game_data_comment(self.start_turn_idx, self.initial_turn_number, self.game_hash, self.mode,
                                    time_used=self.time_used)
        if self.hit_move_limit:   # (kata's own note)
            comment += f" (stopped at maxMovesPerGame; scored as it stood: {self.result})"
        moves = list(s.moves)
        comments = [self.move_comments.get(i, "") for i in range(len(moves))]
        if comments and s.is_game_finished and not self.hit_move_limit:
            comments = with_result_comment(comments, self.result)
        final_comment = ""
        if s.is_resignation and moves and moves[-1][0] != self.winner:
            # KataGo's match SGF leaves the resigning player's last move out and keeps its comment on a bare node.
            moves, final_comment = moves[:-1], comments.pop()
        record = SgfGame(x_size=s.x_size, y_size=s.y_size, komi=s.komi, rules=rules_of(s),
                         handicap=handicap_stones_counting_first_moves(s), setup=list(s.initial_stones()),
                         first_player=s.initial_player, moves=moves,
                         result=None if self.hit_move_limit else self.result,
                         black_name=self.black, white_name=self.white, root_comment=comment,
                         move_comments=comments, final_comment=final_comment)
        ko_passes = {i: xy for i, xy in passes_for_ko(s, 0, self.pass_alive_under_suicide).items() if i < len(moves)}
        return write_sgf(with_passes_for_ko(record, ko_passes))


def start_game(settings: MatchSettings, rng: random.Random, black: MatchBot, white: MatchBot,
               referee: Optional[MatchBot] = None) -> GameStart:
    """Rules, board and komi drawn as self-play draws them, or a start or hint position from
    ``settings.positions``. komiAuto and handicap stones use a network: Black's, else White's, else the
    ``referee``'s (another bot of the match) when neither has one."""
    initializer = GameInitializer(settings.game, _NO_POLICY_INIT, black.spec.params, positions=settings.positions)
    start = initializer.create(rng)
    net_bot = next((b for b in (black, white, referee) if b is not None and b.net is not None), None)
    state, plan = start.state, start.komi
    if (plan.extra_black > 0 or settings.game.komi_auto) and net_bot is None:
        raise RuntimeError("komiAuto and handicap games need a bot with a network; set komiMean / handicapProb = 0")
    if plan.make_game_fair_for_empty_board:
        plan.set_without_noise(state)
        adjust_komi_to_even(net_bot.search, state, net_bot.spec.params, settings.compensate_komi_visits, rng)
        plan.komi_mean = state.komi
        plan.set_with_noise(state, rng)
    if plan.extra_black > 0:
        play_extra_black(net_bot.net, state, plan.extra_black, HANDICAP_TEMPERATURE, rng, 0.5)
        if plan.make_game_fair:
            plan.set_without_noise(state)
            adjust_komi_to_even(net_bot.search, state, net_bot.spec.params, settings.compensate_komi_visits, rng)
    openings = settings.policy_openings
    if openings is not None and start.allow_policy_init and not state.is_game_finished:
        _play_policy_opening(settings, openings, start, rng, black, white, net_bot)
    return start


def _play_policy_opening(settings: MatchSettings, openings: PolicyOpenings, start: GameStart, rng: random.Random,
                         black: MatchBot, white: MatchBot, net_bot: MatchBot) -> None:
    """KataGo's initGamesWithPolicy in a match: raw-policy moves, each side's from its own network (a
    rollout bot's from its opponent's), under a freshly noised komi; then komi made fair with
    probability compensate_prob, or always where the start itself was to be fair (handicap, start
    positions)."""
    area_prop = openings.start_poses_area_prop if start.is_sgf_pos else openings.area_prop
    if area_prop <= 0:
        return
    state, plan = start.state, start.komi
    black_bot = black if black.net is not None else net_bot
    white_bot = white if white.net is not None else net_bot
    kept_komi = state.komi
    plan.set_with_noise(state, rng)   # a little mixing of openings across komi, as KataGo
    play_policy_opening(black_bot.net, state, rng, end_if_all_pass_alive=True, area_prop=area_prop,
                        gamma_shape=openings.gamma_shape, temperature=openings.temperature,
                        draw_equivalent_wins_for_white=black_bot.spec.params.draw_equivalent_wins_for_white,
                        white_net=white_bot.net,
                        white_draw_equivalent_wins=white_bot.spec.params.draw_equivalent_wins_for_white)
    state.set_komi(kept_komi)
    special_start = plan.extra_black > 0 or start.is_sgf_pos or start.is_hint_pos
    compensate = openings.compensate_prob > 0 and rng.random() < openings.compensate_prob
    if special_start:
        compensate = plan.make_game_fair
    if compensate and not state.is_game_finished:
        adjust_komi_to_even(net_bot.search, state, net_bot.spec.params, settings.compensate_komi_visits, rng)
        plan.komi_mean = state.komi
        plan.set_with_noise(state, rng)


# KataGo plays at least this fraction (1 / N) of the board's points before a match game may be resigned.
MIN_BOARD_AREA_SHARE_BEFORE_RESIGNING = 5


def resigns_after_move(resign: ResignSettings, white_win_loss: list[float], pla: int, turn: int, area: int) -> bool:
    """KataGo's match and gatekeeper resignation (Play::runGame), checked after ``pla`` moved on ``turn``
    (0 at the first searched move): once a fifth of the board's points have been played, when each of the last
    resignConsecTurns root values (both players' searches, White's view) is below resignThreshold for ``pla``.
    Not the GTP engine's rule (no score-difference or moves-per-area conditions)."""
    if not resign.allow_resignation or len(white_win_loss) < resign.resign_consec_turns:
        return False
    if turn < 1 + area // MIN_BOARD_AREA_SHARE_BEFORE_RESIGNING:
        return False
    threshold = resign.resign_threshold
    for value in white_win_loss[-resign.resign_consec_turns:]:
        loser = WHITE if value < threshold else BLACK if value > -threshold else None
        if loser != pla:
            return False
    return True


def play_game(settings: MatchSettings, start: GameStart, black: MatchBot, white: MatchBot,
              should_stop: Callable[[], bool], on_move: Optional[Callable[[MatchBot, tuple], None]] = None
              ) -> Optional[MatchGame]:
    """Play to the end (or maxMovesPerGame); None if stopped first."""
    state = start.state
    start_turn_idx = len(state.moves)
    bots = {BLACK: black, WHITE: white}
    seconds = {BLACK: 0.0, WHITE: 0.0}
    searched = {BLACK: 0, WHITE: 0}
    hit_limit = True
    comments: dict = {}
    white_win_loss: list[float] = []   # every searched turn's root value, both players (KataGo's history)
    area = state.x_size * state.y_size
    for turn in range(settings.max_moves_per_game):
        state.end_game_if_all_pass_alive()
        if state.is_game_finished:
            hit_limit = False
            break
        if should_stop():
            return None
        pla = state.next_player
        bot = bots[pla]
        started = time.perf_counter()
        choice = bot.choose(state, (start.hint_move,) if start.hint_applies(state) else None,
                            clear_tree=settings.clear_bot_before_search)
        seconds[pla] += time.perf_counter() - started
        searched[pla] += 1
        move, win_loss, _lead, _visits = choice
        white_win_loss.append(win_loss)
        comments[len(state.moves)] = bot.last_comment
        state.play(move, pla)
        if on_move is not None:
            on_move(bot, choice)
        if resigns_after_move(settings.resign, white_win_loss, pla, turn, area):
            state.set_winner_by_resignation(WHITE if pla == BLACK else BLACK)
            hit_limit = False
            break
    else:
        state.end_game_if_all_pass_alive()
        hit_limit = not state.is_game_finished
    if not state.is_game_finished:
        state.end_and_score_now()
    return MatchGame(black.spec.name, white.spec.name, state, hit_limit, move_comments=comments,
                     game_hash=(_HASH_SOURCE.getrandbits(HASH_BITS), _HASH_SOURCE.getrandbits(HASH_BITS)),
                     mode=game_mode(start, start.komi.extra_black), start_turn_idx=start_turn_idx,
                     initial_turn_number=start.initial_turn_number, time_used=(seconds[BLACK], seconds[WHITE]),
                     moves_made=(searched[BLACK], searched[WHITE]))


def _no_policy_init() -> PlaySettings:
    """The self-play initializer draws rules, board and komi only: a match's policy openings (if
    any) are played by start_game with each side's own network."""
    import dataclasses

    fields = {f.name: 0 for f in dataclasses.fields(PlaySettings)}
    fields.update(init_games_with_policy=False, reduce_visits=False, use_search_value_surprise=False,
                  fancy_komi_varying=False, max_asymmetric_ratio=1.0, scale_data_weight=1.0,
                  compensate_komi_visits=MATCH_COMPENSATE_KOMI_VISITS)
    return PlaySettings(**fields)


_NO_POLICY_INIT = _no_policy_init()
