"""Moves played before a game's training period: handicap stones and policy-sampled openings.

Also the replay helpers forks use to rebuild a position of a finished game.
"""
from __future__ import annotations

import math
import random
from typing import Optional

from katacli._core.board import GoBoard
from katacli._core.game_state import GameState
from katacli._core.rules_value import CoreRules
from katacli.game.coords import BLACK, WHITE
from katacli.game.rules import ScoringRule
from katacli.selfplay.raw_policy import NO_MOVE, NetEvaluator, opening_move, random_policy_move
from katacli.selfplay.records import Move


def opponent(pla: int) -> int:
    return WHITE if pla == BLACK else BLACK


def play_extra_black(net: NetEvaluator, state: GameState, count: int, temperature: float,
                     rng: random.Random, draw_equivalent_wins_for_white: float = 0.5) -> GameState:
    """Place ``count`` free handicap stones from Black's policy (KataGo's playExtraBlack).

    Each stone becomes part of the initial position (the history is cleared with Black
    to move), so Black still moves first afterwards: N extra black = N+1 stones' worth.
    """
    if state.is_game_finished:
        return state
    for _ in range(count):
        policy = net.policy(state, allow_pass=False, draw_equivalent_wins_for_white=draw_equivalent_wins_for_white)
        move = random_policy_move(rng, policy, temperature)
        if move is NO_MOVE:
            break
        state.play(move, BLACK)
        state.reset_history_keep_board(BLACK)
    return state


def play_policy_opening(net: NetEvaluator, state: GameState, rng: random.Random, *, end_if_all_pass_alive: bool,
                        area_prop: float, gamma_shape: float, temperature: float,
                        draw_equivalent_wins_for_white: float = 0.5, white_net: Optional[NetEvaluator] = None,
                        white_draw_equivalent_wins: Optional[float] = None) -> int:
    """Play a random number of raw-policy moves (mean: area_prop of the board area). Returns how many.
    ``net`` chooses every move, or only Black's when ``white_net`` chooses White's (a match between two
    networks: each side opens with its own policy, as KataGo's getGameInitializationMove does)."""
    if state.is_game_finished:
        return 0
    mean = state.x_size * state.y_size * area_prop
    if gamma_shape != 1.0:
        count = int(math.floor(rng.gammavariate(gamma_shape, 1.0) * (mean / gamma_shape)))
    else:
        count = int(math.floor(rng.expovariate(1.0) * mean))
    played = 0
    for _ in range(count):
        if white_net is not None and state.next_player == WHITE:
            dew = draw_equivalent_wins_for_white if white_draw_equivalent_wins is None else white_draw_equivalent_wins
            policy = white_net.policy(state, draw_equivalent_wins_for_white=dew)
        else:
            policy = net.policy(state, draw_equivalent_wins_for_white=draw_equivalent_wins_for_white)
        move = opening_move(rng, policy, temperature)
        state.play(move, state.next_player)
        played += 1
        if end_if_all_pass_alive:
            state.end_game_if_all_pass_alive()
        if state.is_game_finished:
            break
    return played


def initial_position(state: GameState, rules_tuple: Optional[tuple] = None, encore_phase: int = 0,
                     pass_alive_under_suicide: bool = False) -> GameState:
    """A fresh GameState at ``state``'s initial position (before any of its recorded moves)."""
    board = GoBoard(state.x_size, state.y_size)
    for color, xy in state.initial_stones():
        board.set_stone(xy, color)
    fresh = GameState(state.x_size, state.y_size, rules_tuple or state.rules_tuple, state.initial_player,
                      board=board, encore_phase=encore_phase)
    fresh.set_always_pass_alive_under_suicide_rules(pass_alive_under_suicide)
    return fresh


def replay_to_move(end_state: GameState, move_idx: int, rules_tuple: tuple, initial_encore_phase: int,
                   pass_alive_under_suicide: bool) -> GameState:
    """The position before move ``move_idx`` of ``end_state``'s game, under possibly different rules.

    Stops early (as KataGo does) at a move the new rules forbid or when the game ends.
    """
    territory = CoreRules(*rules_tuple).scoring_rule != ScoringRule.AREA
    state = initial_position(end_state, rules_tuple, initial_encore_phase if territory else 0,
                             pass_alive_under_suicide)
    moves = end_state.moves
    if not moves:
        return state
    for pla, move in moves[: min(move_idx, len(moves) - 1)]:
        if not state.is_legal(move, pla):
            break
        state.play(move, pla)
        if state.is_game_finished:
            break
    return state


def enter_encore(state: GameState, phase: int, pass_alive_under_suicide: bool) -> GameState:
    """The same stones with a fresh history in territory-scoring encore ``phase`` (cleanup training)."""
    pla = state.next_player
    fresh = GameState(state.x_size, state.y_size, state.rules_tuple, pla, board=state.board(), encore_phase=phase)
    fresh.reset_history_keep_board(pla)  # also drops any simple-ko point
    fresh.set_always_pass_alive_under_suicide_rules(pass_alive_under_suicide)
    return fresh


def best_fork_move(net: NetEvaluator, state: GameState, candidates: list[Move]) -> Move:
    """Of the candidate moves, the one after which the net likes the mover's score best."""
    pla = state.next_player
    best, best_score = None, 0.0
    for i, move in enumerate(candidates):
        after = state.copy()
        after.play(move, pla)
        white_score = net.evaluate(after, draw_equivalent_wins_for_white=0.5).white_score_mean
        if i == 0 or (pla == WHITE and white_score > best_score) or (pla == BLACK and white_score < best_score):
            best, best_score = move, white_score
    return best
