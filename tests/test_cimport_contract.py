"""The .pxd contracts work for third-party Cython code after installation.

Compiles a small extension that cimports the installed katacli._core modules by their dotted
names (board, history, features, the search's nodes and tree), builds it against wherever
katacli was imported from, and checks that it runs: the same thing a user's own Cython
search or tooling would do.
"""
import importlib
from pathlib import Path

import pytest

import katacli._core

cythonize = pytest.importorskip("Cython.Build").cythonize
setuptools = pytest.importorskip("setuptools")

SOURCE = '''
# cython: language_level=3
from katacli._core.board cimport Board, Loc, C_BLACK, C_WHITE, loc_of, board_init, board_play, board_num_liberties
from katacli._core.history cimport History, history_init, history_free, history_play
from katacli._core.rules cimport Rules, KO_POSITIONAL, SCORING_AREA, TAX_NONE, WHB_ZERO
from katacli._core.features cimport (FeatureParams, default_feature_params, fill_features_v7,
                                  NUM_SPATIAL_FEATURES_V7, NUM_GLOBAL_FEATURES_V7)
from katacli._core.search_nodes cimport Node, ChildSlot, child_weight
from katacli._core.search_tree cimport SearchTree
from libc.string cimport memset


def liberties_after_two_moves():
    cdef Board b
    board_init(&b, 9, 9)
    board_play(&b, loc_of(4, 4, 9), C_BLACK, False)
    board_play(&b, loc_of(4, 3, 9), C_WHITE, False)
    return board_num_liberties(&b, loc_of(4, 4, 9))


def stones_in_features():
    cdef Board b
    cdef History h
    cdef Rules r
    cdef FeatureParams p
    cdef float spatial[NUM_SPATIAL_FEATURES_V7 * 81]
    cdef float global_[NUM_GLOBAL_FEATURES_V7]
    cdef int i
    cdef float total = 0
    r.ko_rule = KO_POSITIONAL
    r.scoring_rule = SCORING_AREA
    r.tax_rule = TAX_NONE
    r.multi_stone_suicide_legal = True
    r.has_button = False
    r.white_handicap_bonus_rule = WHB_ZERO
    r.friendly_pass_ok = False
    r.komi = 7.5
    board_init(&b, 9, 9)
    history_init(&h, &b, C_BLACK, &r, 0)
    history_play(&h, loc_of(2, 2, 9), C_BLACK)
    default_feature_params(&p)
    fill_features_v7(&h, C_WHITE, &p, 9, 9, spatial, global_, NULL)   # no ladder cache
    history_free(&h)
    for i in range(81):
        total += spatial[2 * 81 + i]   # opponent (black) stones, as seen by white
    return total


def edge_weight_of_half_the_child_visits():
    cdef Node child
    cdef ChildSlot slot
    memset(&child, 0, sizeof(Node))
    child.stats.visits = 4
    child.stats.weight_sum = 3.0
    slot.node = &child
    slot.edge_visits = 2
    return child_weight(&slot)


def is_search_tree(obj):
    return isinstance(obj, SearchTree)
'''


def test_third_party_extension_cimports_installed_contracts(tmp_path, monkeypatch):
    package_parent = str(Path(katacli._core.__file__).resolve().parents[2])  # the folder holding katacli/
    module_name = "cimport_contract_probe"
    (tmp_path / f"{module_name}.pyx").write_text(SOURCE)
    monkeypatch.chdir(tmp_path)
    extensions = cythonize(
        [setuptools.Extension(module_name, [f"{module_name}.pyx"])],
        include_path=[package_parent], quiet=True, language_level=3,
    )
    dist = setuptools.Distribution({"ext_modules": extensions, "script_args": ["build_ext", "--inplace", "-q"]})
    dist.parse_command_line()
    dist.run_commands()
    monkeypatch.syspath_prepend(str(tmp_path))
    probe = importlib.import_module(module_name)
    assert probe.liberties_after_two_moves() == 3
    assert probe.stones_in_features() == 1.0
    # The search's storage contract (structs, inline per-child values) and the SearchTree type.
    assert probe.edge_weight_of_half_the_child_visits() == 1.5
    from katacli._core.search_tree import SearchTree
    assert probe.is_search_tree(SearchTree(9, 9))
    assert not probe.is_search_tree(object())


def test_the_cores_numbers_reach_python_from_one_module():
    """Colours, the pass location, the largest board and the symmetry count come from the core
    (board.pxd) through katacli._core.constants; the layers above import them from there."""
    from katacli._core import constants
    from katacli.config_keys import spec
    from katacli.game import coords, session, sgf
    from katacli.nn import symmetry
    from katacli.search import restrictions

    assert (constants.EMPTY, constants.BLACK, constants.WHITE, constants.PASS_LOC) == (0, 1, 2, 1)
    assert (constants.MAX_BOARD_LEN, constants.NUM_SYMMETRIES) == (19, 8)
    assert coords.BLACK is session.BLACK is constants.BLACK and sgf.EMPTY is constants.EMPTY
    assert spec.NUM_SYMMETRIES is symmetry.NUM_SYMMETRIES is constants.NUM_SYMMETRIES
    assert restrictions.PASS_LOC is constants.PASS_LOC and spec.MAX_BOARD_LEN is constants.MAX_BOARD_LEN
