"""The read-only views of a search: analysis snapshots, the root's results, the tree's diagnostics.

:class:`SearchViews` is the half of :class:`~katacli.search.searcher.Searcher` that only reads the tree
(under the searcher's lock, so another thread may call it while a search runs); the searcher itself
drives the search. Everything is White's view; protocols orient it with ``.oriented(perspective)``.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Optional

import numpy as np

from katacli._core import search_diagnostics as sd
from katacli._core import search_results as sr
from katacli._core.constants import BLACK
from katacli.game.coords import flat_index, point_of_flat
from katacli.search.results import (
    ChildResult, RootInfo, RootResult, SearchAnalysis, child_result_from_data, duplicate_for_symmetries,
    move_info_from_data, position_hashes, replaced,
)


class SearchViews:
    """Read-only views of a Searcher's tree (mixed into Searcher: uses its _lock, tree, params,
    restrictions and the root's human-SL evaluation)."""

    def root_values(self, pruned: bool = True) -> Optional[dict]:
        """The root's search values (White's view; see search_results.root_values)."""
        with self._lock:
            return sr.root_values(self.tree, pruned)

    def analysis(self, *, max_pv_len: int = 15, min_moves: int = 0, include_ownership: bool = False,
                 include_ownership_stdev: bool = False, include_moves_ownership: bool = False,
                 include_policy: bool = False, duplicate_symmetries: bool = True) -> SearchAnalysis:
        """A snapshot of the search (White's view; use .oriented(perspective) for protocols). Thread-safe."""
        with self._lock:
            tree = self.tree
            mover = tree.root_pla
            data = sr.analysis_data(tree, max_pv_len, min_moves)
            moves = [move_info_from_data(self.params, d, i, mover) for i, d in enumerate(data)]
            if include_moves_ownership:
                moves = [self._with_move_ownership(m) for m in moves]
            symmetries = getattr(self, "root_symmetries", [0])
            if duplicate_symmetries and self.params.root_symmetry_pruning and len(symmetries) > 1:
                avoided = self._avoided_root_moves()
                moves = duplicate_for_symmetries(moves, symmetries, tree.x_size, tree.y_size, avoided)
            moves = [m if m.order == i else _with_order(m, i) for i, m in enumerate(moves)]
            human = self._root_human
            if human is not None:
                moves = [replaced(m, human_prior=_policy_at(human, m.move, tree.x_size, tree.y_size)) for m in moves]
            root = self._root_info()
            ownership = stdev = None
            if include_ownership or include_ownership_stdev:
                result = sr.tree_ownership(tree)
                if result is not None:
                    ownership, stdev = result
            policy = sr.root_policy(tree) if include_policy else None
            human_policy = None
            if include_policy and human is not None:
                human_policy = np.append(np.asarray(human.policy, np.float32), np.float32(human.policy_pass))
            return SearchAnalysis(root=root, moves=moves, root_player=mover, x_size=tree.x_size, y_size=tree.y_size,
                                  ownership=ownership if include_ownership else None,
                                  ownership_stdev=stdev if include_ownership_stdev else None, policy=policy,
                                  human_policy=human_policy)

    def child_results(self) -> list[ChildResult]:
        """The root moves the search visited, in KataGo's analysis order (White's view)."""
        with self._lock:
            return self._child_results()

    def _child_results(self) -> list[ChildResult]:
        # PVs are not needed; the core's shortest is one move.
        return [child_result_from_data(d) for d in sr.analysis_data(self.tree, 1, 0) if d["visits"] > 0]

    def root_result(self) -> Optional[RootResult]:
        """The root's values, play selection weights, searched and raw priors and visited children (White's
        view), as self-play records them; None before the root is evaluated."""
        with self._lock:
            tree = self.tree
            node = sr.root_values(tree, False)
            raw = sr.root_raw_values(tree)
            if node is None or raw is None:
                return None
            moves, values = sr.play_selection(tree, 0.0)
            searched = sr.root_policy(tree, True)
            x_size, y_size = tree.x_size, tree.y_size
            search_priors = tuple((point_of_flat(i, x_size, y_size), float(p)) for i, p in enumerate(searched)
                                  if p >= 0.0)
            raw_moves, raw_priors = tree.root_edges()
            return RootResult(
                visits=tree.root_visits, win=node["win"], loss=node["loss"], no_result=node["no_result"],
                score_mean=node["score_mean"], win_loss=node["win_loss"], lead=node["lead"],
                play_selection=tuple(zip(moves, values)), search_priors=search_priors,
                raw_win=raw["win"], raw_loss=raw["loss"], raw_no_result=raw["no_result"],
                raw_score_mean=raw["score_mean"],
                raw_priors=tuple((m, float(p)) for m, p in zip(raw_moves, raw_priors)),
                children=tuple(self._child_results()),
            )

    def root_raw_values(self) -> Optional[dict]:
        """The root's network evaluation (White's view), or None before it is evaluated."""
        with self._lock:
            return sr.root_raw_values(self.tree)

    def root_raw_ownership(self):
        """The root's network ownership (White's view, board points row-major), or None (not evaluated yet,
        or a net without an ownership head)."""
        with self._lock:
            return sr.root_raw_ownership(self.tree)

    def root_policy(self):
        """The root's policy as the search used it (noise and temperature included), board points row-major
        then pass, -1 for illegal moves; None before it is evaluated."""
        with self._lock:
            return sr.root_policy(self.tree, True)

    def principal_variation(self, max_len: int) -> list:
        """The best line from the root, at most ``max_len`` moves."""
        with self._lock:
            return sr.principal_variation(self.tree, max_len)[0]

    def root_stats(self, max_pv_len: int) -> Optional[dict]:
        """The root's own averages and best line (White's view), as KataGo's printTree shows the root; None
        before any visit."""
        with self._lock:
            root = sr.node_stats(self.tree)
            if root is not None:
                root["pv"] = sr.principal_variation(self.tree, max_pv_len)[0]
            return root

    def node_analysis(self, path: list, max_pv_len: int) -> Optional[list]:
        """Analysis data, with weight factors, of the moves at the node reached by ``path`` (moves from the
        root); None if the tree does not hold that line. White's view, raw dicts of search_results."""
        with self._lock:
            return sr.analysis_data(self.tree, max_pv_len, 0, list(path), True)

    def graph_edges(self) -> tuple[int, list]:
        """(node count, (parent, child) edges) of the search graph, nodes numbered from the root as
        KataGo's evalsgf -print-graph numbers them (see search_diagnostics.graph_edges)."""
        with self._lock:
            return sd.graph_edges(self.tree)

    def sharp_score(self) -> Optional[float]:
        """White's sharp score of the root (KataGo's getSharpScore), None before it is evaluated."""
        with self._lock:
            return sd.sharp_score(self.tree)

    def shortterm_errors(self, path: list) -> tuple[float, float]:
        """The network's short-term win-loss and score errors averaged over the subtree at ``path``
        ((-1, -1) when the network has no such heads; see search_diagnostics.shortterm_errors)."""
        with self._lock:
            return sd.shortterm_errors(self.tree, list(path))

    def root_ending_bonus(self) -> list:
        """Per root child: utility without and with the ending score bonus (search_diagnostics.root_ending_bonus)."""
        with self._lock:
            return sd.root_ending_bonus(self.tree)

    def _with_move_ownership(self, info):
        result = sr.tree_ownership(self.tree, info.move)
        if result is None:
            return info
        return dataclasses.replace(info, ownership=result[0], ownership_stdev=result[1])

    def _avoided_root_moves(self):
        if self.restrictions is None:
            return None
        until = self.restrictions.until_by_loc(self.tree.root_pla)
        if until is None:
            return None
        x_size = self.tree.x_size
        out = set()
        for y in range(self.tree.y_size):
            for x in range(x_size):
                if until[(x + 1) + (y + 1) * (x_size + 1)] > 0:
                    out.add((x, y))
        return out

    def _root_info(self) -> Optional[RootInfo]:
        values = sr.root_values(self.tree, True)
        if values is None:
            return None
        raw = sr.root_raw_values(self.tree)
        state = self.tree.root_state()
        this_hash, sym_hash = position_hashes(state)
        info = dict(
            visits=values["visits"], weight=values["weight"], winrate=0.5 + 0.5 * values["win_loss"],
            score_lead=values["lead"], score_selfplay=values["score_mean"], score_stdev=values["score_stdev"],
            utility=values["utility"], current_player="B" if self.tree.root_pla == BLACK else "W",
            this_hash=this_hash, sym_hash=sym_hash,
        )
        if raw is not None:
            info.update(
                raw_winrate=0.5 + 0.5 * (raw["win"] - raw["loss"]), raw_lead=raw["lead"],
                raw_score_selfplay=raw["score_mean"],
                raw_score_selfplay_stdev=math.sqrt(max(0.0, raw["score_mean_sq"] - raw["score_mean"] ** 2)),
                raw_no_result_prob=raw["no_result"], raw_st_wr_error=raw["st_wl_error"] * 0.5,
                raw_st_score_error=raw["st_score_error"], raw_var_time_left=raw["var_time_left"],
            )
        human = self._root_human
        if human is not None:
            mean = float(human.white_score_mean)
            info.update(
                human_winrate=0.5 + 0.5 * (float(human.white_win) - float(human.white_loss)), human_score_mean=mean,
                human_score_stdev=math.sqrt(max(0.0, float(human.white_score_mean_sq) - mean * mean)),
                human_st_wr_error=float(human.shortterm_winloss_error) * 0.5,
                human_st_score_error=float(human.shortterm_score_error),
            )
        return RootInfo(**info)


def _policy_at(output, move, x_size: int, y_size: int) -> float:
    """An NNOutput's policy for a move ((x, y) or None for pass), 0 where illegal (KataGo's humanPrior)."""
    prob = output.policy_pass if move is None else output.policy[flat_index(move, x_size, y_size)]
    return max(0.0, float(prob))


def _with_order(info, order: int):
    return replaced(info, order=order)
