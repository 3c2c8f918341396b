"""One self-play game from setup to a :class:`~katacli.selfplay.records.FinishedGame` (KataGo's Play::runGame).

The same search plays both sides. Before the training period: fair komi when asked
(komiAuto), handicap stones, a policy-sampled opening, and now and then a jump into
the territory-scoring encore (cleanup training). During play every move's search
targets are recorded, with playout cap randomization deciding which turns get a
full search (and so a training weight). Afterwards: outcome targets, surprise
weighting, side positions, lead estimates, and forks for later games.
"""
from __future__ import annotations

import dataclasses
import logging
import random
from dataclasses import dataclass
from typing import Callable, Optional, Protocol

from katacli._core.game_state import GameState
from katacli.game.coords import BLACK, WHITE
from katacli.game.handicap import handicap_stones_counting_first_moves
from katacli.game.rules import ScoringRule
from katacli.data.schema import (
    MODE_ASYM,
    MODE_CLEANUP,
    MODE_FORK,
    MODE_HANDICAP,
    MODE_HINTFORK,
    MODE_HINTPOS,
    MODE_NORMAL,
    MODE_SGFPOS,
)
from katacli.selfplay import finish, forks
from katacli.selfplay.game_init import ForkStore, GameInitializer, GameStart, gaussian_truncated
from katacli.selfplay.komi import adjust_komi_to_even, compute_lead
from katacli.selfplay.raw_policy import NO_MOVE, NetEvaluator, random_forking_move
from katacli.selfplay.opening import enter_encore, opponent, play_extra_black, play_policy_opening
from katacli.selfplay.records import FinishedGame, SidePosition, TurnRecord
from katacli.selfplay.searching import (
    MoveSearchRequest,
    SelfplaySearch,
    extract_targets,
    params_for_move,
    search_limits,
)
from katacli.selfplay.settings import SelfplaySettings

log = logging.getLogger("katacli.selfplay")

# Share of games that do not end automatically once everything is pass-alive (so the net
# also sees positions where the players must wrap up by themselves).
KEEP_PLAYING_WHEN_PASS_ALIVE_PROB = 0.02
# Territory-scoring games that jump into the encore for cleanup training.
CLEANUP_TRAINING_PROB = 0.04
CLEANUP_AREA_PROP = 0.25
CLEANUP_TEMPERATURE = 2.0 / 3.0
# Games that keep unfair komi get it varied toward fair with these probabilities (handicap, fork).
FANCY_KOMI_PROB_HANDICAP, FANCY_KOMI_PROB_FORK = 0.5, 0.25
FANCY_KOMI_NOISE = 0.75
FANCY_KOMI_TRUNCATION = 2.5
# Chance per move to look for a newer network (cheap, and still quick to notice).
NEW_NET_CHECK_PROB = 0.1
# Side positions continue one more random move pair with this probability.
SIDE_POSITION_CONTINUE_PROB = 0.25
# Leads are not estimated where no-result looks likely (komi and result then relate oddly).
MAX_NO_RESULT_FOR_LEAD = 0.3
HASH_BITS = 64
# logSearchInfo lists this many of the most visited moves.
TOP_MOVES_LOGGED = 5


def game_mode(start, extra_black: int) -> int:
    """The game's type as KataGo's runGame sets it (FinishedGameData::mode; GAME_TYPE_NAMES): a handicap,
    asymmetric-playout, start-position, hint or fork game, the later ones taking precedence."""
    mode = MODE_NORMAL
    if extra_black > 0:
        mode = MODE_HANDICAP
    if start.playout_doubling_advantage != 0:
        mode = MODE_ASYM
    if start.is_sgf_pos:
        mode = MODE_SGFPOS
    if start.is_hint_pos:
        mode = MODE_HINTPOS
    if start.is_hint_fork:
        mode = MODE_HINTFORK
    elif start.is_fork:
        mode = MODE_FORK
    return mode


@dataclass
class ModelHandle:
    """A loaded network that games play with."""

    name: str
    net: NetEvaluator
    pass_alive_under_suicide: bool = False


class ModelSource(Protocol):
    """Where games get their network: acquire() the latest, release() it when done with it."""

    def acquire(self) -> ModelHandle: ...

    def release(self, handle: ModelHandle) -> None: ...


class FixedModel:
    """A ModelSource that always gives the same model (tests, benchmarks)."""

    def __init__(self, handle: ModelHandle):
        self.handle = handle

    def acquire(self) -> ModelHandle:
        return self.handle

    def release(self, handle: ModelHandle) -> None:
        pass


SearchFactory = Callable[[ModelHandle, random.Random], SelfplaySearch]


class GameRunner:
    """Plays games; one instance is shared by all game threads (keep per-game state local)."""

    def __init__(self, settings: SelfplaySettings, make_search: SearchFactory, fork_store: Optional[ForkStore] = None,
                 on_move: Optional[Callable[[], None]] = None):
        """on_move: called after every move of every game (progress counters)."""
        self.settings = settings
        self.make_search = make_search
        self.fork_store = fork_store if fork_store is not None else ForkStore()
        self.on_move = on_move

    def run_game(self, rng: random.Random, models: ModelSource,
                 should_stop: Callable[[], bool] = lambda: False) -> Optional[FinishedGame]:
        """Play one game; None if stopped before it finished."""
        s = self.settings
        model = models.acquire()
        game: Optional[_Game] = None
        try:
            initializer = GameInitializer(s.game, s.play, s.search, model.pass_alive_under_suicide, s.positions)
            fork = self.fork_store.take(rng)
            used_seki_fork = False
            if fork is None and s.play.seki_fork_hack_prob > 0 and rng.random() < s.play.seki_fork_hack_prob:
                fork = self.fork_store.take_seki(rng)
                used_seki_fork = fork is not None
            start = initializer.create(rng, fork)
            game = _Game(self, start, model, rng, models, should_stop)
            finished = game.play()
            if finished is None or should_stop():
                return None
            forks.maybe_fork_game(finished, self.fork_store, s.play, rng, game.model.net)
            if not used_seki_fork:
                forks.maybe_seki_fork_game(finished, self.fork_store, s.play, initializer, rng)
            forks.maybe_hint_fork_game(finished, self.fork_store, start)
            return finished
        finally:
            models.release(game.model if game is not None else model)


class _Game:
    def __init__(self, runner: GameRunner, start: GameStart, model: ModelHandle, rng: random.Random,
                 models: ModelSource, should_stop: Callable[[], bool]):
        self.settings = runner.settings
        self.play_settings = runner.settings.play
        self.start = start
        self.model = model
        self.rng = rng
        self.models = models
        self.should_stop = should_stop
        self.on_move = runner.on_move
        self.params = start.search_params
        self.dew = self.params.draw_equivalent_wins_for_white
        self.search = runner.make_search(model, rng)
        self.changed_nets: list[tuple[str, int]] = []

    # ---- helpers
    def _adjust_komi(self, state: GameState) -> None:
        adjust_komi_to_even(self.search, state, self.params, self.play_settings.compensate_komi_visits, self.rng,
                            self.start.playout_doubling_advantage, self.start.pda_player)

    def _maybe_switch_net(self, next_turn_idx: int) -> None:
        if not self.settings.runner.switch_nets_mid_game or self.rng.random() >= NEW_NET_CHECK_PROB:
            return
        latest = self.models.acquire()
        if latest.name == self.model.name:
            self.models.release(latest)
        else:
            self.models.release(self.model)
            self.model = latest
            self.search.set_net(latest.net)
            self.changed_nets.append((latest.name, next_turn_idx))
            log.info("game switching mid-game to new net %s", latest.name)

    # ---- before the training period
    def _prepare(self) -> tuple[GameState, int]:
        """Komi, handicap, opening; returns the start state and the game mode."""
        p, rng, start = self.play_settings, self.rng, self.start
        state, plan = start.state, start.komi
        net = self.model.net
        if plan.make_game_fair_for_empty_board:
            fair_pla = WHITE if (p.flip_komi_prob_when_no_compensate != 0.0
                                 and rng.random() < p.flip_komi_prob_when_no_compensate) else BLACK
            empty = GameState(state.x_size, state.y_size, state.rules_tuple, fair_pla)
            empty.set_always_pass_alive_under_suicide_rules(self.model.pass_alive_under_suicide)
            plan.set_without_noise(empty)
            self._adjust_komi(empty)
            plan.komi_mean = empty.komi
            plan.set_with_noise(state, rng)
        if plan.extra_black > 0 and not state.is_game_finished:
            play_extra_black(net, state, plan.extra_black, p.handicap_temperature, rng, self.dew)
        if plan.make_game_fair:
            plan.set_without_noise(state)
            self._adjust_komi(state)
            plan.komi_mean = state.komi
            plan.set_with_noise(state, rng)
        elif (plan.extra_black > 0 or start.is_fork) and p.fancy_komi_varying and \
                rng.random() < (FANCY_KOMI_PROB_HANDICAP if plan.extra_black > 0 else FANCY_KOMI_PROB_FORK):
            original = state.komi
            plan.set_without_noise(state)
            self._adjust_komi(state)
            fair = state.komi
            komi = rng.uniform(min(original, fair), max(original, fair))
            komi += FANCY_KOMI_NOISE * (state.x_size * state.y_size) ** 0.5 * gaussian_truncated(rng, FANCY_KOMI_TRUNCATION)
            plan.komi_mean = komi
            plan.set_with_noise(state, rng)

        mode = game_mode(start, plan.extra_black)

        init_area_prop = p.start_poses_policy_init_area_prop if start.is_sgf_pos else p.policy_init_area_prop
        if p.init_games_with_policy and start.allow_policy_init and not state.is_game_finished \
                and init_area_prop > 0:
            # Open under a differently noised komi, for a little mixing of openings across komi.
            kept_komi = state.komi
            plan.set_with_noise(state, rng)
            play_policy_opening(net, state, rng, end_if_all_pass_alive=self.end_if_pass_alive,
                                area_prop=init_area_prop, gamma_shape=p.policy_init_gamma_shape,
                                temperature=p.policy_init_area_temperature, draw_equivalent_wins_for_white=self.dew)
            state.set_komi(kept_komi)
            compensate = p.compensate_after_policy_init_prob > 0 and rng.random() < p.compensate_after_policy_init_prob
            if mode != MODE_NORMAL:
                compensate = plan.make_game_fair
            if compensate:
                self._adjust_komi(state)
                plan.komi_mean = state.komi
                plan.set_with_noise(state, rng)

        self.began_in_encore = 0
        # Hint positions are studied as given, never moved on into the encore.
        if not start.is_hint_pos and state.rules_tuple.scoring_rule == ScoringRule.TERRITORY and state.encore_phase == 0 \
                and not state.is_game_finished and rng.random() < CLEANUP_TRAINING_PROB:
            shape = 0.8 + p.policy_init_gamma_shape * 0.2
            play_policy_opening(net, state, rng, end_if_all_pass_alive=self.end_if_pass_alive,
                                area_prop=CLEANUP_AREA_PROP, gamma_shape=shape, temperature=CLEANUP_TEMPERATURE,
                                draw_equivalent_wins_for_white=self.dew)
            if not state.is_game_finished:
                self._adjust_komi(state)
                plan.komi_mean = state.komi
                plan.set_with_noise(state, rng)
                phase = rng.randint(1, 2)
                state = enter_encore(state, phase, self.model.pass_alive_under_suicide)
                mode = MODE_CLEANUP
                self.began_in_encore = phase
        return state, mode

    # ---- the game
    def play(self) -> Optional[FinishedGame]:
        s, p, rng = self.settings, self.play_settings, self.rng
        self.end_if_pass_alive = rng.random() >= KEEP_PLAYING_WHEN_PASS_ALIVE_PROB
        state, mode = self._prepare()
        game_hash = (rng.getrandbits(HASH_BITS), rng.getrandbits(HASH_BITS))
        start_state = state.copy()
        start_turn_idx = len(state.moves)
        turns: list[TurnRecord] = []
        pending_sides: list[SidePosition] = []
        history_win_loss: list[float] = []
        pda, pda_pla = self.start.playout_doubling_advantage, self.start.pda_player

        for _ in range(s.runner.max_moves_per_game):
            if self.end_if_pass_alive:
                state.end_game_if_all_pass_alive()
            if state.is_game_finished:
                break
            if self.should_stop():
                return None
            pla = state.next_player
            hint_now = self.start.hint_applies(state)
            has_hint_turn = self.start.has_hint or self.start.is_hint_fork
            limits = search_limits(self.params, p, pla, rng, history_win_loss, pda, pda_pla, hint_now=hint_now,
                                   turns_since_hint=len(state.moves) - self.start.hint_turn if has_hint_turn else None)
            result = self.search.search(MoveSearchRequest(state, params_for_move(self.params, limits),
                                                          reuse_tree=limits.reuse_tree,
                                                          center_score=limits.center_score,
                                                          has_root_hint=hint_now,
                                                          root_hint_move=self.start.hint_move))
            move = result.move
            if not state.is_legal(move, pla):
                raise RuntimeError(f"search returned the illegal move {move} for player {pla}")
            turns.append(TurnRecord(pla, move, extract_targets(result), limits.target_weight, limits.is_cheap_search))
            if s.runner.log_search_info:
                top = sorted(result.play_selection_values.items(), key=lambda kv: -kv[1])[:TOP_MOVES_LOGGED]
                log.info("search for %s at move %d: %d visits (%s), White win-loss %.3f, lead %.1f, top %s",
                         "B" if pla == BLACK else "W", len(state.moves), result.root_visits,
                         "cheap" if limits.is_cheap_search else "full", result.reported_win_loss,
                         result.reported_lead, ", ".join(f"{m}:{v:.0f}" for m, v in top))
            if s.runner.log_moves:
                log.info("move %d: %s %s", len(state.moves), "B" if pla == BLACK else "W", move)
            if p.side_position_prob > 0.0 and rng.random() < p.side_position_prob:
                self._queue_side_position(state, pla, result.raw.policy, move, pending_sides)
            if p.reduce_visits:
                history_win_loss.append(result.reported_win_loss)
            state.play(move, pla)
            if self.on_move is not None:
                self.on_move()
            self._maybe_switch_net(len(state.moves))

        return self._finish(state, start_state, start_turn_idx, turns, pending_sides, mode, game_hash)

    def _queue_side_position(self, state: GameState, pla: int, policy, played, pending: list) -> None:
        fork_move = random_forking_move(self.rng, state, policy, played)
        if fork_move is NO_MOVE:
            return
        side = state.copy()
        side.play(fork_move, pla)
        if not side.is_game_finished:
            pending.append(SidePosition(side, opponent(pla), nets_changed_so_far=len(self.changed_nets)))

    # ---- after the last move
    def _finish(self, state, start_state, start_turn_idx, turns, pending_sides, mode, game_hash) -> Optional[FinishedGame]:
        p, rng = self.play_settings, self.rng
        end_state = state.copy()
        hit_turn_limit = not state.is_game_finished
        scored = state
        if scored.is_game_finished and scored.is_no_result:
            final = finish.final_value_targets(scored, self.dew)
            zeros = [[0] * scored.x_size for _ in range(scored.y_size)]
            full, ownership, scoring = finish.final_areas(scored, zeros)
            full[:] = 0
        else:
            ownership_rows, _ = scored.area_now()
            scored.end_and_score_now()
            final = finish.final_value_targets(scored, self.dew)
            full, ownership, scoring = finish.final_areas(scored, ownership_rows)

        game = FinishedGame(
            start_state=start_state, end_state=end_state, turns=turns, final_value=final,
            final_full_area=full, final_ownership=ownership, final_white_scoring=scoring, game_hash=game_hash,
            draw_equivalent_wins_for_white=self.dew, hit_turn_limit=hit_turn_limit,
            num_extra_black=self.start.komi.extra_black, mode=mode, training_weight=self.start.training_weight,
            used_initial_position=self.start.is_fork,
            pda_player=self.start.pda_player, playout_doubling_advantage=self.start.playout_doubling_advantage,
            # The game's own mode, stamped at its start: a net switched in mid-game does not change it.
            pass_alive_under_suicide=end_state.always_pass_alive_under_suicide_rules, start_turn_idx=start_turn_idx,
            changed_nets=self.changed_nets, model_name=self.model.name,
            handicap_for_sgf=handicap_stones_counting_first_moves(end_state), scored_state=scored,
            initial_encore_phase=self.began_in_encore, initial_turn_number=self.start.initial_turn_number,
        )
        if self.start.has_hint and turns:
            # The hint turn's values are skewed by the visits forced onto the hinted move: it takes the
            # next turn's (or the outcome's) value targets instead, as KataGo does.
            turns[0].targets.value = dataclasses.replace(game.white_value_targets[1])

        area = state.x_size * state.y_size
        surprise = finish.value_surprise_by_turn(turns, final, area, p.use_search_value_surprise)
        finish.apply_surprise_weighting(turns, surprise, p)
        self._search_side_positions(game, pending_sides)
        if self.should_stop():
            return None
        if p.scale_data_weight != 1.0:
            for t in turns:
                t.target_weight *= p.scale_data_weight
            for sp in game.side_positions:
                sp.target_weight *= p.scale_data_weight
        for t in turns:
            t.target_weight_unrounded = t.target_weight
            t.target_weight = finish.resolve_weight(t.target_weight, rng)
        for sp in game.side_positions:
            sp.target_weight = finish.resolve_weight(sp.target_weight, rng)
        if p.estimate_lead_prob > 0.0 and not game.is_no_result:
            self._estimate_leads(game)
        return game

    def _search_side_positions(self, game: FinishedGame, pending: list[SidePosition]) -> None:
        """Search the queued side positions at full strength (no playout doubling), sometimes extending them."""
        i = 0
        while i < len(pending):
            sp = pending[i]
            i += 1
            if self.should_stop():
                return
            result = self.search.search(MoveSearchRequest(sp.state, self.params))
            sp.targets = extract_targets(result)
            sp.target_weight = 1.0
            sp.nets_changed_so_far = len(self.changed_nets)
            game.side_positions.append(sp)
            if self.rng.random() < SIDE_POSITION_CONTINUE_PROB:
                reply = sp.state.copy()
                reply.play(result.move, sp.player)
                if not reply.is_game_finished:
                    policy = self.model.net.policy(reply, draw_equivalent_wins_for_white=self.dew)
                    fork_move = random_forking_move(self.rng, reply, policy, NO_MOVE)
                    if fork_move is not NO_MOVE:
                        reply.play(fork_move, reply.next_player)
                        if not reply.is_game_finished:
                            pending.append(SidePosition(reply, reply.next_player,
                                                        nets_changed_so_far=len(self.changed_nets)))
            self._maybe_switch_net(len(game.end_state.moves))

    def _estimate_leads(self, game: FinishedGame) -> None:
        p, rng = self.play_settings, self.rng
        state = game.start_state.copy()
        pda, pda_pla = self.start.playout_doubling_advantage, self.start.pda_player
        for t in game.turns:
            value = t.targets.value
            if t.target_weight > 0 and value.no_result < MAX_NO_RESULT_FOR_LEAD and rng.random() < p.estimate_lead_prob:
                if self.should_stop():
                    return
                value.lead = compute_lead(self.search, state, self.params, p.estimate_lead_visits, pda, pda_pla)
                value.has_lead = True
            state.play(t.move, t.player)
        for sp in game.side_positions:
            value = sp.targets.value
            if sp.target_weight > 0 and value.no_result < MAX_NO_RESULT_FOR_LEAD and rng.random() < p.estimate_lead_prob:
                if self.should_stop():
                    return
                value.lead = compute_lead(self.search, sp.state, self.params, p.estimate_lead_visits, pda, pda_pla)
                value.has_lead = True
