"""The eval cache (useEvalCache, evalCacheMinVisits), KataGo's semantics: what a finished search stores,
how a later search of the same (or a transposed) position uses it, when it is replaced or cleared, and
that with the key off (or graph search off) nothing changes."""
import math

from katacli._core.game_state import GameState
from katacli._core import search_results as sr
from katacli.search import Searcher
from katacli.search.eval_cache import EvalCache, params_hash
from support.fakes import MaterialEvaluator

from test_search_core import BLACK, WHITE, plain_params

MIN_VISITS = 20
BIG_SEARCH = 1500


def cached_params(**changes):
    return plain_params(use_eval_cache=True, eval_cache_min_visits=MIN_VISITS, **changes)


def search(state, visits, params, cache=None, seed=5):
    searcher = Searcher(state, params, MaterialEvaluator(), seed=seed, eval_cache=cache)
    searcher.run(max_visits=visits)
    return searcher


def filled_cache(state=None, visits=BIG_SEARCH, **changes):
    cache = EvalCache()
    searcher = search(state if state is not None else GameState(5), visits, cached_params(**changes), cache)
    return cache, searcher


def blend_fraction(entry_weight, node_visits):
    """KataGo's share of the cached value in a node's value."""
    weight = math.sqrt(MIN_VISITS * entry_weight) if entry_weight > MIN_VISITS else entry_weight
    ratio = node_visits / weight
    return 1.0 / (1.0 + 3.0 * ratio * (1.0 + 2.0 * ratio * ratio))


def test_a_finished_search_stores_every_node_with_enough_visits():
    cache, searcher = filled_cache()
    tree = searcher.tree
    root = tree.eval_cache_entry()
    values = searcher.root_values(pruned=False)   # the node's own averages, as stored
    assert root["weight"] == BIG_SEARCH
    assert math.isclose(root["win_loss"], values["win_loss"], rel_tol=1e-6)
    assert math.isclose(root["lead"], values["lead"], rel_tol=1e-6)
    children = sr.analysis_data(tree, 1)
    well_visited = {c["move"] for c in children if sr.node_stats(tree, [c["move"]])["visits"] >= MIN_VISITS}
    assert well_visited and set(root["first_explore"]) == well_visited
    for move in well_visited:
        child = tree.eval_cache_entry([move])
        stats = sr.node_stats(tree, [move])
        assert child is not None and child["weight"] == stats["visits"]
        cached_wl, cached_score, weight = root["first_explore"][move]
        assert weight == stats["visits"] and math.isclose(cached_score, stats["score_mean"], rel_tol=1e-5)
    few = [c["move"] for c in children if sr.node_stats(tree, [c["move"]])["visits"] < MIN_VISITS]
    assert all(tree.eval_cache_entry([move]) is None for move in few)
    assert len(cache) >= 1 + len(well_visited)


def test_a_new_search_of_the_position_holds_the_entry_and_its_values_move_towards_it():
    cache, big = filled_cache()
    target = big.root_values()["utility"]
    fresh = search(GameState(5), 30, cached_params(), EvalCache(), seed=9)
    reused = search(GameState(5), 30, cached_params(), cache, seed=9)
    assert reused.tree.node_has_eval_cache_entry() and not fresh.tree.node_has_eval_cache_entry()
    assert abs(reused.root_values()["utility"] - target) < abs(fresh.root_values()["utility"] - target)


def test_a_new_leaf_blends_its_evaluation_with_the_cached_values():
    cache, _ = filled_cache()
    reused = search(GameState(5), 6, cached_params(), cache, seed=9)
    tree = reused.tree
    checked = 0
    for child in sr.analysis_data(tree, 1):
        move = child["move"]
        stats = sr.node_stats(tree, [move])
        entry = tree.eval_cache_entry([move])
        if stats is None or stats["visits"] != 1 or entry is None or entry["weight"] <= 0:
            continue
        state = GameState(5)
        state.play(move, BLACK)
        raw = search(state, 1, plain_params()).root_values()["lead"]
        frac = blend_fraction(entry["weight"], 1)
        assert math.isclose(stats["lead"], raw + frac * (entry["lead"] - raw), rel_tol=1e-6, abs_tol=1e-9)
        assert not math.isclose(stats["lead"], raw, rel_tol=1e-6)
        checked += 1
    assert checked > 0


def test_selection_tries_the_best_cached_move_before_unexplored_policy_moves():
    cache, big = filled_cache()
    cached = big.tree.eval_cache_entry()["first_explore"]
    # Black to move: the best cached move has the lowest White win-loss. The net's policy is uniform,
    # so without the cache the first playout below the root takes the first move in policy order.
    best = min(cached, key=lambda move: cached[move][0])
    reused = search(GameState(5), 2, cached_params(), cache)
    plain = search(GameState(5), 2, cached_params(), EvalCache())
    explored = [c["move"] for c in sr.analysis_data(reused.tree, 1)]
    assert explored == [best]
    assert [c["move"] for c in sr.analysis_data(plain.tree, 1)] != [best]


def test_a_transposed_position_finds_the_entry():
    state = GameState(5)
    line = [((1, 1), BLACK), ((3, 3), WHITE), ((3, 1), BLACK)]
    for move, pla in line:
        state.play(move, pla)
    cache, _ = filled_cache(state, 400)
    other_order = GameState(5)
    other_order.play((3, 1), BLACK)
    other_order.play((3, 3), WHITE)
    searcher = search(other_order, 300, cached_params(), cache)
    assert sr.node_identity(searcher.tree, [(1, 1)]) is not None
    assert searcher.tree.node_has_eval_cache_entry([(1, 1)])
    assert not searcher.tree.node_has_eval_cache_entry([(1, 2)])


def test_a_lighter_record_does_not_replace_a_heavier_one_but_a_heavier_does():
    cache, _ = filled_cache(visits=1000)
    search(GameState(5), 200, cached_params(), cache, seed=2)
    assert search(GameState(5), 1, cached_params(), cache).tree.eval_cache_entry()["weight"] == 1000
    search(GameState(5), 800, cached_params(), cache, seed=3)   # at least 3/4 of the weight: replaces
    assert search(GameState(5), 1, cached_params(), cache).tree.eval_cache_entry()["weight"] == 800


def test_other_search_parameters_do_not_see_the_entries():
    cache, _ = filled_cache()
    other = search(GameState(5), 30, cached_params(cpuct_exploration=1.5), cache)
    assert not other.tree.node_has_eval_cache_entry()
    assert params_hash(cached_params()) == params_hash(cached_params())
    assert params_hash(cached_params()) != params_hash(cached_params(max_visits=7))


def test_clearing_empties_the_table_while_trees_keep_their_snapshots():
    cache, _ = filled_cache()
    reused = search(GameState(5), 30, cached_params(), cache)
    cache.clear()
    assert len(cache) == 0 and reused.tree.node_has_eval_cache_entry()
    reused.run(max_visits=60)
    assert reused.tree.check_invariants() and reused.tree.total_virtual_losses() == 0
    assert len(cache) > 0   # the search recorded again


def test_without_the_key_or_without_graph_search_nothing_is_stored_or_used():
    off = EvalCache()
    searcher = search(GameState(5), 400, plain_params(eval_cache_min_visits=MIN_VISITS), off)
    assert len(off) == 0 and searcher.eval_cache is off
    tree_search = EvalCache()
    search(GameState(5), 400, cached_params(use_graph_search=False), tree_search)
    assert len(tree_search) == 0
    # A filled cache handed to a search with the key off changes nothing.
    cache, _ = filled_cache()
    with_cache = search(GameState(5), 200, plain_params(), cache, seed=4)
    without = search(GameState(5), 200, plain_params(), None, seed=4)
    assert sr.analysis_data(with_cache.tree, 5) == sr.analysis_data(without.tree, 5)


# ---- engines: one table per run, shared by every search, emptied by clear_cache ----------------------
def test_gtp_keeps_the_table_across_games_until_clear_cache():
    from support.gtp import feed, make_engine

    engine, out, _ = make_engine("useEvalCache=true, evalCacheMinVisits=10, maxVisits=150, numSearchThreads=1",
                                 scripted=False)
    feed(engine, ["boardsize 7", "genmove b"])
    cache = engine._bot._eval_cache
    stored = len(cache)
    assert stored > 0 and engine._bot._searcher.eval_cache is cache
    feed(engine, ["clear_board", "genmove b"])
    assert len(cache) >= stored
    feed(engine, ["clear_cache"])
    assert len(cache) == 0
    engine.stop_background()
    assert "?" not in out.getvalue()


def test_gtp_without_the_key_has_no_table():
    from support.gtp import feed, make_engine

    engine, _, _ = make_engine("maxVisits=50, numSearchThreads=1", scripted=False)
    feed(engine, ["boardsize 7", "genmove b"])
    assert engine._bot._eval_cache is None and engine._bot._searcher.eval_cache is None
    engine.stop_background()


def test_analysis_queries_share_one_table_emptied_by_clear_cache():
    from support.analysis import query_line, running_engine, send

    settings = {"useEvalCache": "true", "evalCacheMinVisits": 10}
    with running_engine(settings) as (engine, out):
        assert all(worker.eval_cache is engine.eval_cache for worker in engine.workers)
        send(engine, query_line("a", boardXSize=7, boardYSize=7, maxVisits=150))
        out.wait_finals(1)
        assert len(engine.eval_cache) > 0
        send(engine, '{"id":"c","action":"clear_cache"}')
        assert len(engine.eval_cache) == 0
