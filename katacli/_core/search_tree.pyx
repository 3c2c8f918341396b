# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""SearchTree: the Python boundary of the KataGo-style MCTS (see search_nodes.pxd for the vocabulary).

Python drives it one batch at a time: prepare_root_eval / collect (descents, nogil) -> evaluate
the batch -> apply (store evals and back up, nogil). The per-node work lives in the search_*
modules by phase (selection, backup, leaf evaluation, root policy, descents); this class owns
the tree's memory and buffers, root settings from Python, and the checks used by the tests.
"""
from libc.stdint cimport int16_t, uint16_t, uint64_t
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memset
from libc.math cimport sqrt

import numpy as np

from katacli._core.board cimport (
    Board, Loc, Color, Hash128, C_EMPTY, C_BLACK, C_WHITE, MAX_ARR_SIZE, PASS_LOC, NULL_LOC, NUM_SYMMETRIES, loc_of, loc_x, loc_y,
)
from katacli._core.rules cimport KO_SIMPLE
from katacli._core.history cimport (
    History, history_copy, history_free, history_is_legal_tolerant, history_make_move_assume_legal,
    history_pass_would_end_phase, history_pass_would_end_game,
)
from katacli._core.game_state cimport GameState
from katacli._core.features cimport NUM_SPATIAL_FEATURES_V7, NUM_GLOBAL_FEATURES_V7, default_feature_params
from katacli._core.search_values cimport SearchConfig
from katacli._core.playout cimport rng_seed
from katacli._core.nogo cimport nogo_is_legal, nogo_has_legal_move
from katacli._core.search_nodes cimport (
    TreeCore, Node, DirectEval, LeafSlot, MAX_EDGES, NODE_UNEVALUATED, NODE_PENDING, NODE_EXPANDED, LEAF_NEW,
    LEAF_ROOT_REINIT, LEAF_REINIT, HUMAN_AT_ROOT, HUMAN_AT_ROOT_PLAYER, HUMAN_AT_OPPONENT, node_new, svb_release,
    svb_reset, node_drop_edgeless_children, node_attach_eval_cache, eval_cache_key, tree_init_positions,
    node_edges_in_prior_order,
)
from katacli._core.search_graph cimport (
    graph_state_hash, graph_hash_after_move, free_all_nodes, graph_virtual_losses, graph_node_count,
    graph_visits_consistent, graph_record_eval_cache,
)
from katacli._core.search_evalcache cimport EvalCache
from katacli._core.search_patterns cimport PatternBonusTable
from katacli._core.search_mirror cimport mirror_update, mirror_eval_difficult
from katacli._core.search_backup cimport add_direct_eval_as_leaf, backup, undo_virtual_losses
from katacli._core.search_leaf cimport draw_leaf_symmetry, fill_leaf_features, store_human_priors, rollout_evaluate
from katacli._core.leaf_workers cimport LeafHelpers, LeafWorkers, leaf_ring_new, leaf_ring_free
from katacli._core.search_root cimport begin_search_root, root_take_child_subtree
from katacli._core.search_descent cimport leaf_slot_start, collect_batch
from katacli._core.search_apply cimport apply_batch_arrays, NUM_VALUE_COLUMNS
from katacli._core.ladder cimport ladder_cache_release


# Futile-visit pruning's bound before a search sets one: none (KataGo's 1e30).
cdef double UNBOUNDED_VISITS_LEFT = 1e30

# ---- Python boundary ------------------------------------------------------------------------
# Leaves a batch may hold: backup_batch numbers them in a node's int16 fields (search_nodes.pxd).
MAX_TREE_BATCH = 32766

cdef class SearchTree:
    """One search tree with its batch buffers. Not thread-safe: one caller at a time (the Searcher locks).

    Typical cycle: set_root(state) -> prepare_root_eval() / evaluate / apply() when the root
    needs it -> begin_search() -> repeat collect() / evaluate / apply() -> results (search_results).
    """

    def __cinit__(self, int x_size, int y_size, int max_batch=16, int num_lanes=1):
        memset(&self.t, 0, sizeof(TreeCore))
        self.t.upper_bound_visits_left = UNBOUNDED_VISITS_LEFT   # no futile-visit pruning until a search bounds it
        if not (2 <= x_size <= 19 and 2 <= y_size <= 19):
            raise ValueError("board size must be 2..19 per side")
        if not 1 <= max_batch <= MAX_TREE_BATCH:
            raise ValueError(f"max_batch must be 1..{MAX_TREE_BATCH}")
        if not 1 <= num_lanes <= MAX_LANES:
            raise ValueError(f"num_lanes must be 1..{MAX_LANES}")
        self.t.x_size = x_size
        self.t.y_size = y_size
        self.t.area = x_size * y_size
        self.t.max_batch = max_batch
        self.t.rollouts_per_leaf = 1
        tree_init_positions(&self.t)
        self._num_lanes = num_lanes
        self._all_leaves = <LeafSlot*>calloc(num_lanes * max_batch, sizeof(LeafSlot))
        self.t.scratch = <double*>malloc(5 * MAX_EDGES * sizeof(double))
        # Every lane's rows in one array per buffer; t's pointers and the properties show the current lane's.
        rows = num_lanes * max_batch
        self._spatial = np.zeros((rows, NUM_SPATIAL_FEATURES_V7, y_size, x_size), np.float32)
        self._global = np.zeros((rows, NUM_GLOBAL_FEATURES_V7), np.float32)
        self._legal = np.zeros((rows, x_size * y_size + 1), np.uint8)
        self._keys = np.zeros((rows, 2), np.uint64)
        self._is_root = np.zeros(rows, np.uint8)
        self._white = np.zeros(rows, np.uint8)
        self._mirror_hack = np.zeros(rows, np.uint8)
        self._leaf_symmetry = np.full(rows, -1, np.int8)
        self._batch_views = {}
        self._sym_pos_maps = None
        self._point_at_lane(0)
        default_feature_params(&self.t.feature_params)
        rng_seed(&self.t.rng, 0x1234567)
        self.t.search_age = 0

    cdef void _point_at_lane(self, int lane):
        """Aim t's batch pointers at this lane's rows."""
        cdef int first = lane * self.t.max_batch
        cdef float[:, :, :, ::1] spatial_view = self._spatial
        cdef float[:, ::1] global_view = self._global
        cdef unsigned char[:, ::1] legal_view = self._legal
        cdef uint64_t[:, ::1] keys_view = self._keys
        cdef unsigned char[::1] is_root_view = self._is_root
        cdef unsigned char[::1] white_view = self._white
        cdef unsigned char[::1] mirror_hack_view = self._mirror_hack
        cdef signed char[::1] symmetry_view = self._leaf_symmetry
        self.t.leaves = self._all_leaves + first
        self.t.spatial = &spatial_view[first, 0, 0, 0]
        self.t.global_features = &global_view[first, 0]
        self.t.legal = &legal_view[first, 0]
        self.t.cache_keys = &keys_view[first, 0]
        self.t.leaf_is_root = &is_root_view[first]
        self.t.leaf_white = &white_view[first]
        self.t.leaf_mirror_hack = &mirror_hack_view[first]
        self.t.leaf_symmetry = &symmetry_view[first]
        self._lane = lane

    def set_leaf_threads(self, int count):
        """Helper threads of this tree's own that fill the leaves' network inputs while the search thread
        descends to the next leaf (katacli.search's numLeafFeatureThreads); 0 stops them. The batches and
        the tree are the same either way. Returns the number running (0 if threads could not start, or
        batches hold one leaf)."""
        if count < 0:
            raise ValueError("the number of leaf threads cannot be negative")
        if count == 0 or self.t.max_batch <= 1:
            self.set_leaf_helpers(None)
        elif self._helpers is None or self._helpers.threads != count:
            self.set_leaf_helpers(LeafHelpers(count))
        return self.leaf_threads

    def set_leaf_helpers(self, LeafHelpers helpers):
        """Use ``helpers`` (a LeafHelpers, which other trees stepped from the same thread may share) to fill
        leaf inputs; None: none."""
        if helpers is self._helpers and (helpers is None or self._ring != NULL):
            return
        with nogil:
            leaf_ring_free(self._ring)
        self._ring = NULL
        self._helpers = None
        if helpers is not None and helpers.threads > 0 and self.t.max_batch > 1:
            self._ring = leaf_ring_new(self.t.max_batch, helpers.threads)
            if self._ring != NULL:
                self._helpers = helpers

    @property
    def leaf_threads(self):
        """Helper threads this tree's batches use (set_leaf_threads, set_leaf_helpers)."""
        return self._helpers.threads if self._helpers is not None else 0

    @property
    def leaf_helpers(self):
        """The LeafHelpers this tree uses, or None."""
        return self._helpers

    @property
    def leaves_filled_by_helpers(self):
        """Leaves whose inputs this tree's helpers filled since they started (for any tree sharing them)."""
        return self._helpers.leaves_filled if self._helpers is not None else 0

    @property
    def num_lanes(self):
        """How many leaf batches this tree can have in flight at once (each up to max_batch_capacity leaves)."""
        return self._num_lanes

    def select_lane(self, int lane):
        """Make ``lane`` the batch that collect / apply / abandon and the buffer properties work on. The other
        lane's waiting leaves stay pending (their nodes blocked, their virtual losses in place)."""
        if not 0 <= lane < self._num_lanes:
            raise IndexError(f"lane {lane} of {self._num_lanes}")
        if lane == self._lane:
            return
        self._lane_leaves[self._lane] = self.t.num_leaves
        self._point_at_lane(lane)
        self.t.num_leaves = self._lane_leaves[lane]

    def set_leaf_symmetries(self, pos_maps, seed=0):
        """Draw each non-root leaf's orientation here and fill its features already transformed (the
        evaluator then gathers nothing; ``leaf_symmetry`` says which). ``pos_maps``: int32 [8, area], row s
        giving where each point goes under symmetry s (the evaluator's convention); None: off (canonical
        features, the evaluator picks orientations)."""
        cdef const int[:, ::1] maps
        if pos_maps is None:
            self._sym_pos_maps = None
            self.t.sym_pos_maps = NULL
            return
        arr = np.ascontiguousarray(pos_maps, np.int32)
        if arr.shape != (NUM_SYMMETRIES, self.t.area):
            raise ValueError(f"pos_maps must be [{NUM_SYMMETRIES}, {self.t.area}], got {arr.shape}")
        if not (np.sort(arr, axis=1) == np.arange(self.t.area, dtype=np.int32)).all():
            raise ValueError("each pos_maps row must be a permutation of the board's points")
        self._sym_pos_maps = arr
        maps = arr
        self.t.sym_pos_maps = &maps[0, 0]
        rng_seed(&self.t.sym_rng, <uint64_t>seed)

    @property
    def draws_leaf_symmetries(self):
        return self.t.sym_pos_maps != NULL

    @property
    def leaf_symmetry(self):
        """int8 per batch leaf: the orientation its features were filled in (-1: canonical)."""
        return self._lane_rows(self._leaf_symmetry)

    def batch_arrays(self, int n):
        """The current lane's first n leaves as views, for a network batch: (spatial, global features, legal
        mask (bool), cache keys, white to move (bool), is root (bool), anti-mirror shift (bool), leaf
        symmetry). Made once per lane and size: a search asks for them at every batch."""
        _check_batch_size(&self.t, n)
        key = (self._lane, n)
        views = self._batch_views.get(key)
        if views is None:
            first = self._lane * self.t.max_batch
            rows = slice(first, first + n)
            views = (self._spatial[rows], self._global[rows], self._legal[rows].view(np.bool_), self._keys[rows],
                     self._white[rows].view(np.bool_), self._is_root[rows].view(np.bool_),
                     self._mirror_hack[rows].view(np.bool_), self._leaf_symmetry[rows])
            self._batch_views[key] = views
        return views

    def batch_flags(self, int n):
        """(whether the root is among the first n leaves, whether any of them takes the anti-mirror shift):
        what a batch's settings depend on, without a numpy call."""
        cdef int i
        cdef bint root = False, mirror = False
        _check_batch_size(&self.t, n)
        for i in range(n):
            root = root or self.t.leaf_is_root[i]
            mirror = mirror or self.t.leaf_mirror_hack[i]
        return root, mirror

    def _lane_rows(self, array):
        first = self._lane * self.t.max_batch
        return array[first:first + self.t.max_batch]

    def __dealloc__(self):
        cdef int i
        leaf_ring_free(self._ring)   # (no batch is running: collect holds the tree)
        self._ring = NULL
        free_all_nodes(&self.t)
        if self.t.has_root_hist:
            history_free(&self.t.root_hist)
        for i in range(self._num_lanes * self.t.max_batch):
            free(self._all_leaves[i].path)
            free(self._all_leaves[i].slots)
            free(self._all_leaves[i].counted)
        free(self._all_leaves)
        free(self.t.scratch)
        free(self.t.root_priors)
        svb_reset(&self.t)
        ladder_cache_release(&self.t.ladder_cache)

    # -- configuration --------------------------------------------------------------------------
    def configure(self, params, int pass_alive_suicide_override=-1, bint nn_has_shortterm_error=False):
        """Copy the search parameters the core uses from a SearchParams (or any object with its fields)."""
        cdef SearchConfig* c = &self.t.cfg
        cdef double old_svb = c.subtree_value_bias_factor
        cdef bint graph = params.use_graph_search
        c.win_loss_utility_factor = params.win_loss_utility_factor
        c.static_score_utility_factor = params.static_score_utility_factor
        c.dynamic_score_utility_factor = params.dynamic_score_utility_factor
        c.dynamic_score_center_zero_weight = params.dynamic_score_center_zero_weight
        c.dynamic_score_center_scale = params.dynamic_score_center_scale
        c.no_result_utility_for_white = params.no_result_utility_for_white
        c.draw_equivalent_wins_for_white = params.draw_equivalent_wins_for_white
        c.cpuct_exploration = params.cpuct_exploration
        c.cpuct_exploration_log = params.cpuct_exploration_log
        c.cpuct_exploration_base = params.cpuct_exploration_base
        c.cpuct_utility_stdev_prior = params.cpuct_utility_stdev_prior
        c.cpuct_utility_stdev_prior_weight = params.cpuct_utility_stdev_prior_weight
        c.cpuct_utility_stdev_scale = params.cpuct_utility_stdev_scale
        c.fpu_reduction_max = params.fpu_reduction_max
        c.fpu_loss_prop = params.fpu_loss_prop
        c.root_fpu_reduction_max = params.root_fpu_reduction_max
        c.root_fpu_loss_prop = params.root_fpu_loss_prop
        c.fpu_parent_weight_by_visited_policy = params.fpu_parent_weight_by_visited_policy
        c.fpu_parent_weight_by_visited_policy_pow = params.fpu_parent_weight_by_visited_policy_pow
        c.fpu_parent_weight = params.fpu_parent_weight
        c.value_weight_exponent = params.value_weight_exponent
        c.use_noise_pruning = params.use_noise_pruning
        c.noise_prune_utility_scale = params.noise_prune_utility_scale
        c.noise_pruning_cap = params.noise_pruning_cap
        c.use_uncertainty = params.use_uncertainty
        c.uncertainty_coeff = params.uncertainty_coeff
        c.uncertainty_exponent = params.uncertainty_exponent
        c.uncertainty_max_weight = params.uncertainty_max_weight
        c.subtree_value_bias_factor = params.subtree_value_bias_factor
        c.subtree_value_bias_free_prop = params.subtree_value_bias_free_prop
        c.subtree_value_bias_weight_exponent = params.subtree_value_bias_weight_exponent
        c.root_noise_enabled = params.root_noise_enabled
        c.root_desired_per_child_visits_coeff = params.root_desired_per_child_visits_coeff
        c.wide_root_noise = params.wide_root_noise
        c.chosen_move_subtract = params.chosen_move_subtract
        c.chosen_move_prune = params.chosen_move_prune
        c.use_lcb_for_selection = params.use_lcb_for_selection
        c.lcb_stdevs = params.lcb_stdevs
        c.min_visit_prop_for_lcb = params.min_visit_prop_for_lcb
        c.use_non_buggy_lcb = params.use_non_buggy_lcb
        c.root_ending_bonus_points = params.root_ending_bonus_points
        c.root_prune_useless_moves = params.root_prune_useless_moves
        c.root_symmetry_pruning = params.root_symmetry_pruning
        c.conservative_pass = params.conservative_pass
        c.fill_dame_before_pass = params.fill_dame_before_pass
        c.enable_passing_hacks = params.enable_passing_hacks
        c.enable_more_passing_hacks = params.enable_more_passing_hacks
        c.futile_visits_threshold = params.futile_visits_threshold
        c.policy_optimism = params.policy_optimism
        c.root_policy_optimism = params.root_policy_optimism
        c.nn_policy_temperature = params.nn_policy_temperature
        c.num_virtual_losses_per_thread = params.num_virtual_losses_per_thread
        c.human_cpuct_exploration = params.human_sl_cpuct_exploration
        c.human_cpuct_permanent = params.human_sl_cpuct_permanent
        c.human_explore_weightless[HUMAN_AT_ROOT] = params.human_sl_root_explore_prob_weightless
        c.human_explore_weightful[HUMAN_AT_ROOT] = params.human_sl_root_explore_prob_weightful
        c.human_explore_weightless[HUMAN_AT_ROOT_PLAYER] = params.human_sl_pla_explore_prob_weightless
        c.human_explore_weightful[HUMAN_AT_ROOT_PLAYER] = params.human_sl_pla_explore_prob_weightful
        c.human_explore_weightless[HUMAN_AT_OPPONENT] = params.human_sl_opp_explore_prob_weightless
        c.human_explore_weightful[HUMAN_AT_OPPONENT] = params.human_sl_opp_explore_prob_weightful
        c.human_chosen_move_prop = params.human_sl_chosen_move_prop
        c.human_chosen_move_ignore_pass = params.human_sl_chosen_move_ignore_pass
        c.human_chosen_move_pikl_lambda = params.human_sl_chosen_move_pikl_lambda
        c.nn_has_shortterm_error = nn_has_shortterm_error
        c.sqrt_board_area = sqrt(<double>self.t.area)
        self.t.feature_params.draw_equivalent_wins_for_white = params.draw_equivalent_wins_for_white
        self.t.feature_params.enable_passing_hacks = params.enable_passing_hacks
        self.t.feature_params.pass_alive_suicide_override = pass_alive_suicide_override
        self.t.ignore_pre_root_history = params.ignore_pre_root_history
        self.t.ignore_all_history = params.ignore_all_history
        self.t.playout_doubling_advantage = params.playout_doubling_advantage
        self.t.anti_mirror = params.anti_mirror
        pda_pla = params.playout_doubling_advantage_pla
        self.t.playout_doubling_advantage_pla = _color_of(pda_pla)
        if old_svb != c.subtree_value_bias_factor or graph != self.t.graph_search:
            self.clear()
        if graph and params.graph_search_rep_bound != self.t.graph_rep_bound and self.t.root != NULL:
            self.clear()   # stored graph hashes were bound with the old repetition bound
        self.t.graph_search = graph
        self.t.graph_rep_bound = params.graph_search_rep_bound
        self.t.graph_catch_up_leak_prob = params.graph_search_catch_up_leak_prob

    def set_mode(self, bint nogo=False, bint rollouts=False, int rollouts_per_leaf=1, bint keep_ownership=False):
        if nogo and not rollouts:
            raise ValueError("NoGo is only searched with rollouts (no network plays NoGo)")
        if nogo != self.t.nogo or rollouts != self.t.rollouts:
            self.clear()
        self.t.nogo = nogo
        self.t.rollouts = rollouts
        self.t.rollouts_per_leaf = max(1, rollouts_per_leaf)
        self.t.keep_ownership = keep_ownership

    def seed(self, unsigned long long seed):
        rng_seed(&self.t.rng, seed)

    def set_search_for(self, int pla):
        """The player the search is for (playout doubling advantage), KataGo's plaThatSearchIsFor."""
        self.t.pla_search_is_for = <Color>pla

    def set_nn_has_shortterm_error(self, bint value):
        """The network reports short-term errors, so uncertainty weighting applies (terminal weights too)."""
        self.t.cfg.nn_has_shortterm_error = value

    @property
    def max_batch_capacity(self):
        return self.t.max_batch

    @property
    def root_turn_number(self):
        """Moves played before the root (KataGo's turn number for early-game interpolation)."""
        return self.t.root_hist.num_moves if self.t.has_root_hist else 0

    def has_legal_move(self):
        """Whether the player to move at the root has any legal move (NoGo: any NoGo move; Go: always)."""
        cdef Color pla = self.t.root_hist.presumed_next_pla
        if not self.t.nogo:
            return True
        return nogo_has_legal_move(&self.t.root_hist.board, pla)

    def set_upper_bound_visits_left(self, double visits):
        self.t.upper_bound_visits_left = visits

    def set_avoid(self, int pla, until_by_loc):
        """Ban moves for pla while the depth below the root is < until (array of MAX_ARR_SIZE ints), or None."""
        cdef int i
        if pla != C_BLACK and pla != C_WHITE:
            raise ValueError("player must be 1 or 2")
        if until_by_loc is None:
            self.t.has_avoid[pla - 1] = False
            memset(self.t.avoid_until[pla - 1], 0, sizeof(self.t.avoid_until[pla - 1]))
            return
        if len(until_by_loc) != MAX_ARR_SIZE:
            raise ValueError(f"avoid array must have {MAX_ARR_SIZE} entries")
        self.t.has_avoid[pla - 1] = False
        for i in range(MAX_ARR_SIZE):
            v = int(until_by_loc[i])
            self.t.avoid_until[pla - 1][i] = <uint16_t>max(0, min(65535, v))
            if v > 0:
                self.t.has_avoid[pla - 1] = True

    # -- position ---------------------------------------------------------------------------------
    def set_root(self, GameState state, bint nogo_rules=False):
        """Search from state (copied); the tree is cleared."""
        self.clear()
        if self.t.has_root_hist:
            history_free(&self.t.root_hist)
        history_copy(&self.t.root_hist, &state.h)
        self.t.has_root_hist = True
        self.t.root_version += 1
        if state.h.board.x_size != self.t.x_size or state.h.board.y_size != self.t.y_size:
            raise ValueError("state board size differs from the tree's")
        if self.t.nogo:
            # NoGo has no captures, hence no ko; skip superko bookkeeping in the tree.
            self.t.root_hist.rules.ko_rule = KO_SIMPLE
        self.t.pla_search_is_for = state.h.presumed_next_pla
        # The chain of graph hashes starts at the root position: every node of the graph lies below
        # this root and shares its earlier history (KataGo replays the whole game instead).
        self.t.root_graph_hash = graph_state_hash(&self.t.root_hist, self.t.root_hist.presumed_next_pla)

    # -- eval cache -------------------------------------------------------------------------------------
    def set_eval_cache(self, cache, params_hash=0, min_visits=1):
        """Search with KataGo's eval cache (an EvalCache; None turns it off), keyed by graph hash xor
        params_hash (128 bits: a hash of every search parameter), storing nodes with min_visits visits.
        Only graph search uses it. Another table clears the tree (its nodes hold the old table's entries)."""
        if cache is not None and not isinstance(cache, EvalCache):
            raise TypeError("cache must be an EvalCache or None")
        if min_visits < 1:
            raise ValueError("min_visits must be at least 1")
        if cache is not self._eval_cache:
            self.clear()
        self._eval_cache = cache
        self.t.eval_cache = NULL if cache is None else &(<EvalCache>cache).table
        self.t.eval_cache_params_hash.h0 = <uint64_t>(params_hash & 0xFFFFFFFFFFFFFFFF)
        self.t.eval_cache_params_hash.h1 = <uint64_t>((params_hash >> 64) & 0xFFFFFFFFFFFFFFFF)
        self.t.eval_cache_min_visits = min_visits

    def set_pattern_table(self, PatternBonusTable table):
        """The pattern bonus table the next searches use (None: pattern avoidance off). Utilities already
        in the tree are refreshed when the next search begins; the table must not change while searching."""
        self._pattern_table = table
        self.t.pattern_table = NULL if table is None else &table.table
        if self.t.root != NULL:
            self.t.root.pattern_hash.h0 = self.t.root.pattern_hash.h1 = 0   # the root's own move never counts

    @property
    def pattern_table(self):
        return self._pattern_table

    def record_eval_cache(self):
        """After a search: store every node with enough visits in the eval cache (no-op when off)."""
        with nogil:
            graph_record_eval_cache(&self.t)

    def eval_cache_entry(self, moves=()):
        """The eval cache's current entry for the position after ``moves`` ((x, y) or None) from the root, as
        a dict with first explore evals keyed by (x, y) or None; None without one (or without such a node)."""
        cdef Node* n = _node_after(self, moves)
        cdef Hash128 key
        if self._eval_cache is None or n == NULL:
            return None
        key = eval_cache_key(&self.t, n.graph_hash)
        entry = self._eval_cache.entry((int(key.h1) << 64) | int(key.h0))
        if entry is not None:
            entry["first_explore"] = {self._xy(loc): value for loc, value in entry["first_explore"].items()}
        return entry

    def node_has_eval_cache_entry(self, moves=()):
        """Whether the node after ``moves`` from the root holds an eval cache snapshot (False without such a node)."""
        cdef Node* n = _node_after(self, moves)
        return n != NULL and n.eval_cache_entry != NULL

    @property
    def graph_search(self):
        """Whether transpositions share nodes (useGraphSearch)."""
        return bool(self.t.graph_search)

    def root_state(self):
        cdef GameState g = GameState.__new__(GameState)
        history_copy(&g.h, &self.t.root_hist)
        g._initialised = True
        return g

    def clear(self):
        free_all_nodes(&self.t)
        free(self.t.root_priors)
        self.t.root_priors = NULL
        svb_reset(&self.t)

    def set_root_hint(self, xy, bint has_hint=True):
        """The root move (x, y), or None for pass, that selection keeps searching almost as often as the
        most searched move (self-play hint positions); has_hint=False removes it."""
        if not has_hint:
            self.t.cfg.root_hint_loc = NULL_LOC
            return
        if xy is None:
            self.t.cfg.root_hint_loc = PASS_LOC
            return
        x, y = xy
        if not (0 <= x < self.t.x_size and 0 <= y < self.t.y_size):
            raise ValueError(f"hint point {xy} is off the {self.t.x_size}x{self.t.y_size} board")
        self.t.cfg.root_hint_loc = loc_of(x, y, self.t.x_size)

    def advance(self, xy, int pla, bint prevent_encore=True):
        """Play a move at the root, keeping the chosen child's subtree when there is one.

        Returns True when the subtree was kept. Raises ValueError if the move is impossible.
        """
        cdef Loc loc
        cdef Node* child
        cdef float old_bonus
        if not self.t.has_root_hist:
            raise ValueError("no root position")
        loc = self._loc(xy)
        if self.t.nogo:
            if not nogo_is_legal(&self.t.root_hist.board, loc, <Color>pla):
                raise ValueError("illegal NoGo move")
        elif not history_is_legal_tolerant(&self.t.root_hist, loc, <Color>pla):
            raise ValueError("illegal move")
        if pla != self.t.root_hist.presumed_next_pla:
            raise ValueError("advance() plays the player to move only; use set_root for other changes")
        old_bonus = self.t.root_hist.white_handicap_bonus_score
        history_make_move_assume_legal(&self.t.root_hist, loc, <Color>pla, prevent_encore and not self.t.nogo)
        self.t.root_version += 1
        self.t.root_graph_hash = graph_hash_after_move(self.t.root_graph_hash, &self.t.root_hist,
                                                       self.t.root_hist.presumed_next_pla, self.t.graph_rep_bound)
        free(self.t.root_priors)
        self.t.root_priors = NULL
        child = root_take_child_subtree(&self.t, loc)
        if child != NULL:
            child.force_non_terminal = self.t.root_hist.is_game_finished
            child.is_terminal = False
            svb_release(&self.t, child)
            self.t.root = child
        kept = child != NULL
        if self.t.root_hist.white_handicap_bonus_score != old_bonus:
            self.clear()
            kept = False
        elif not self.t.nogo:
            if self.t.cfg.conservative_pass and history_pass_would_end_game(&self.t.root_hist, self.t.root_hist.presumed_next_pla):
                self.clear()
                kept = False
            elif prevent_encore and history_pass_would_end_phase(&self.t.root_hist, self.t.root_hist.presumed_next_pla):
                self.clear()
                kept = False
        return kept

    cdef Loc _loc(self, xy) except? -1:
        if xy is None:
            return PASS_LOC
        x, y = xy
        if not (0 <= x < self.t.x_size and 0 <= y < self.t.y_size):
            raise ValueError(f"point {xy} is off the board")
        return loc_of(x, y, self.t.x_size)

    # -- search steps -----------------------------------------------------------------------------
    @property
    def x_size(self):
        return self.t.x_size

    @property
    def y_size(self):
        return self.t.y_size

    @property
    def root_pla(self):
        return self.t.root_hist.presumed_next_pla

    @property
    def root_visits(self):
        return 0 if self.t.root == NULL else self.t.root.stats.visits

    @property
    def root_evaluated(self):
        return self.t.root != NULL and self.t.root.state == NODE_EXPANDED

    @property
    def root_eval_is_current(self):
        """Whether the root was (re)evaluated during the current search (KataGo's node age check)."""
        return self.t.root != NULL and self.t.root.age == self.t.search_age

    @property
    def keep_ownership(self):
        """Whether every node stores its ownership map (else only the root does)."""
        return self.t.keep_ownership

    @property
    def leaf_by_leaf_backup(self):
        """Whether a batch's answers refresh their paths' nodes after every leaf (KataGo's order, one
        playout at a time) rather than once each at the batch's last leaf through them (the default:
        the same tree, bit for bit, but where the subtree value bias table or graph search share
        statistics between nodes; a 256-leaf batch ~1.3x faster). For checks and comparisons."""
        return bool(self.t.leaf_by_leaf_backup)

    @leaf_by_leaf_backup.setter
    def leaf_by_leaf_backup(self, bint value):
        self.t.leaf_by_leaf_backup = value

    @property
    def root_has_ownership(self):
        return self.t.root != NULL and self.t.root.ownership != NULL

    @property
    def root_pass_would_end_game(self):
        return not self.t.nogo and history_pass_would_end_game(&self.t.root_hist, self.t.root_hist.presumed_next_pla)

    @property
    def num_leaves(self):
        return self.t.num_leaves

    @property
    def spatial(self):
        return self._lane_rows(self._spatial)

    @property
    def global_features(self):
        return self._lane_rows(self._global)

    @property
    def legal(self):
        return self._lane_rows(self._legal)

    @property
    def cache_keys(self):
        """[max_batch, 2] uint64: each leaf's NN cache key, low word first (leaf_info's int)."""
        return self._lane_rows(self._keys)

    @property
    def leaf_is_root(self):
        return self._lane_rows(self._is_root)

    @property
    def leaf_white(self):
        return self._lane_rows(self._white)

    @property
    def leaf_mirror_hack(self):
        return self._lane_rows(self._mirror_hack)

    def leaf_needs_ownership(self, int i):
        """Whether batch leaf i's evaluation must include the ownership map (root, every node keeps it, or the
        anti-mirror centre-ownership shift applies)."""
        if not 0 <= i < self.t.num_leaves:
            raise IndexError(i)
        return bool(self.t.leaf_is_root[i] or self.t.keep_ownership or self.t.leaf_mirror_hack[i])

    def update_mirroring(self):
        """Recompute whether the opponent mirrors our moves (antiMirror; KataGo's updateMirroring, once per search
        before the root is evaluated). True when that changed: the caller then clears the tree, as KataGo does."""
        cdef bint changed
        with nogil:
            changed = mirror_update(&self.t)
        return changed

    @property
    def mirroring_player(self):
        """The mirroring opponent (1 Black, 2 White) found by the last update_mirroring, or 0."""
        return int(self.t.mirroring_pla)

    @property
    def mirror_advantage(self):
        """Points the mirroring opponent would win by if the mirror held to the end (0 when none)."""
        return self.t.mirror_advantage

    def leaf_info(self, int i):
        """(cache key as int, is_root, white_to_move) of batch leaf i."""
        if not 0 <= i < self.t.num_leaves:
            raise IndexError(i)
        key = (int(self.t.cache_keys[2 * i + 1]) << 64) | int(self.t.cache_keys[2 * i])
        return key, bool(self.t.leaf_is_root[i]), bool(self.t.leaf_white[i])

    def prepare_root_eval(self):
        """Put the root alone into the batch (first evaluation, or a re-evaluation with root settings).

        Returns the number of leaves (1), or 0 in rollout mode, where the root is evaluated at once.
        """
        cdef History h
        cdef LeafSlot* ls = &self.t.leaves[0]
        if not self.t.has_root_hist:
            raise ValueError("no root position")
        if self.t.root == NULL:
            self.t.root = node_new(self.t.root_hist.presumed_next_pla)
            self.t.root.force_non_terminal = self.t.root_hist.is_game_finished
            self.t.root.graph_hash = self.t.root_graph_hash
            node_attach_eval_cache(&self.t, self.t.root)
        self.t.num_leaves = 0
        if self.t.rollouts:
            with nogil:
                history_copy(&h, &self.t.root_hist)
                if self.t.root.state != NODE_EXPANDED:
                    rollout_evaluate(&self.t, self.t.root, &h, True)
                    add_direct_eval_as_leaf(&self.t, self.t.root, True)
                self.t.root.age = self.t.search_age
                history_free(&h)
            return 0
        leaf_slot_start(ls, self.t.root)
        ls.kind = LEAF_NEW if self.t.root.state != NODE_EXPANDED else LEAF_ROOT_REINIT
        if self.t.root.state != NODE_EXPANDED:
            self.t.root.state = NODE_PENDING
        with nogil:
            draw_leaf_symmetry(&self.t, 0, True)
            fill_leaf_features(&self.t, 0, &self.t.root_hist, &self.t.ladder_cache)
            self.t.leaf_mirror_hack[0] = mirror_eval_difficult(&self.t, &self.t.root_hist)
        self.t.num_leaves = 1
        return 1

    def begin_search(self, center_score=None):
        """Per-search root setup (KataGo's beginSearch / computeRootValues); call once the root is evaluated.
        ``center_score``: White's expected score to centre the score utility on, for a fresh root (KataGo's
        plain root evaluation); None: the root's own values."""
        cdef int syms[NUM_SYMMETRIES]
        cdef int num_syms, i
        cdef bint has_center = center_score is not None
        cdef double center = center_score if has_center else 0.0
        if self.t.root == NULL or self.t.root.state != NODE_EXPANDED:
            raise ValueError("the root must be evaluated before a search begins")
        with nogil:
            num_syms = begin_search_root(&self.t, syms, has_center, center)
        self._root_symmetries = [syms[i] for i in range(num_syms)]
        return self._root_symmetries

    def next_search_age(self):
        """Start a new search 'age': the root counts as stale until re-evaluated or re-noised."""
        self.t.search_age += 1

    def mark_root_current(self):
        if self.t.root != NULL:
            self.t.root.age = self.t.search_age

    def collect(self, int max_leaves, int max_playouts, int max_descents=-1):
        """Run descents; returns (leaves waiting for evaluation, playouts finished)."""
        cdef int done = 0, n
        cdef LeafWorkers* workers = self._helpers.w if self._helpers is not None else NULL
        if self.t.root == NULL or self.t.root.state != NODE_EXPANDED:
            raise ValueError("evaluate the root first (prepare_root_eval / apply)")
        if max_leaves > self.t.max_batch:
            max_leaves = self.t.max_batch
        if max_descents < 0:
            max_descents = 4 * max_leaves + 8 if not self.t.rollouts else max_playouts
        with nogil:
            n = collect_batch(&self.t, max_leaves, max_playouts, max_descents, &done, workers, self._ring)
        return n, done

    def apply(self, outputs, human_outputs=None):
        """Store one evaluation per waiting leaf (NNOutput-like objects, White's view) and back them up.

        human_outputs: None, or per leaf the human-SL net's output (its policy is kept as the node's
        human priors) or None. The objects become the arrays of apply_batch, which does the work.
        """
        cdef int n = self.t.num_leaves
        if len(outputs) != n:
            raise ValueError(f"expected {n} evaluations, got {len(outputs)}")
        if human_outputs is not None and len(human_outputs) != n:
            raise ValueError(f"expected {n} human evaluations, got {len(human_outputs)}")
        values = np.array([(o.white_win, o.white_loss, o.no_result, o.white_score_mean, o.white_score_mean_sq,
                            o.white_lead, o.var_time_left, o.shortterm_winloss_error, o.shortterm_score_error)
                           for o in outputs], np.float64).reshape(n, NUM_VALUE_COLUMNS)
        policy = np.stack([self._row(o.policy, "policy") for o in outputs]) if n else None
        policy_pass = np.array([o.policy_pass for o in outputs], np.float32)
        owners = [getattr(o, "white_ownership", None) for o in outputs]
        own_rows = np.array([own is not None for own in owners], np.uint8)
        ownership = None
        if own_rows.any():
            blank = np.zeros(self.t.area, np.float32)
            ownership = np.stack([self._row(own, "ownership") if own is not None else blank for own in owners])
        human_policy = human_pass = human_rows = None
        if human_outputs is not None:
            human_rows = np.array([h is not None for h in human_outputs], np.uint8)
            blank = np.zeros(self.t.area, np.float32)
            human_policy = np.stack([self._row(h.policy, "human policy") if h is not None else blank
                                     for h in human_outputs])
            human_pass = np.array([h.policy_pass if h is not None else 0.0 for h in human_outputs], np.float32)
        if n:
            self.apply_batch(values, policy, policy_pass, ownership, own_rows, human_policy, human_pass, human_rows)

    def apply_batch(self, values, policy, policy_pass, ownership=None, ownership_rows=None,
                    human_policy=None, human_pass=None, human_rows=None):
        """Store the waiting leaves' evaluations from arrays (one row per leaf, White's view) and back them up.

        values [n, 9] in the order win, loss, no_result, score_mean, score_mean_sq, lead, var_time_left,
        shortterm winloss error, shortterm score error; policy [n, area]; policy_pass [n]; ownership
        [n, area] or None, ownership_rows [n] (None: every row) saying which rows hold one; the human-SL
        net's policy [n, area], pass [n] and rows [n] likewise, or None. Everything is checked before the
        tree changes, so a bad batch raises with the leaves still pending (abandon() then cleans up).
        """
        apply_batch_arrays(&self.t, values, policy, policy_pass, ownership, ownership_rows, human_policy, human_pass,
                           human_rows)

    def _row(self, array, what):
        row = np.asarray(array, dtype=np.float32)
        if row.shape != (self.t.area,):
            raise ValueError(f"{what} has shape {row.shape}, expected ({self.t.area},)")
        return row

    def _human_policy(self, output):
        """(policy array, pass prior) of a human-SL output, checked; None for None."""
        if output is None:
            return None
        policy_array = np.ascontiguousarray(output.policy, dtype=np.float32)
        if policy_array.shape != (self.t.area,):
            raise ValueError(f"human policy has shape {policy_array.shape}, expected ({self.t.area},)")
        return policy_array, float(output.policy_pass)

    def set_root_human_policy(self, output):
        """Give the (expanded) root the human-SL net's policy from ``output`` (NNOutput-like)."""
        cdef const float[::1] policy
        human = self._human_policy(output)
        if self.t.root == NULL or self.t.root.state != NODE_EXPANDED:
            raise ValueError("the root must be evaluated first")
        policy = human[0]
        store_human_priors(&self.t, self.t.root, &policy[0], human[1])

    @property
    def playouts_below_root(self):
        """Counted playouts so far whose value stopped at a weightless (human-SL) step below the root:
        they count toward the search's limits without adding a root visit."""
        return self.t.playouts_below_root

    @property
    def root_has_human_policy(self):
        return self.t.root != NULL and self.t.root.state == NODE_EXPANDED and self.t.root.human_priors != NULL

    def abandon(self):
        """Give up the waiting leaves (evaluation failed): undo virtual losses and pending marks."""
        cdef int i
        cdef LeafSlot* ls
        for i in range(self.t.num_leaves):
            ls = &self.t.leaves[i]
            if ls.path[ls.depth].state == NODE_PENDING:
                ls.path[ls.depth].state = NODE_EXPANDED if ls.kind == LEAF_REINIT else NODE_UNEVALUATED
            undo_virtual_losses(ls)
        self.t.num_leaves = 0

    def abandon_all(self):
        """abandon() every lane's waiting leaves; lane 0 is current afterwards."""
        cdef int lane
        for lane in range(self._num_lanes - 1, -1, -1):
            self.select_lane(lane)
            self.abandon()

    # -- root priors (noise / temperature applied in Python) ------------------------------------------
    def root_edges(self):
        """(moves as (x, y) or None, raw priors) of the root's legal moves, highest prior first."""
        cdef Node* r = self.t.root
        cdef int16_t order[MAX_EDGES]
        cdef int i, count
        if r == NULL or r.state != NODE_EXPANDED:
            return [], np.zeros(0, np.float32)
        count = node_edges_in_prior_order(&self.t, r, order)
        moves = [self._xy(self.t.edge_loc[order[i]]) for i in range(count)]
        priors = np.array([r.policy[order[i]] for i in range(count)], np.float32)
        return moves, priors

    def set_root_priors(self, priors):
        """Priors to search the root with, aligned with root_edges(); None restores the raw ones."""
        cdef Node* r = self.t.root
        cdef int16_t order[MAX_EDGES]
        cdef int i, count
        free(self.t.root_priors)
        self.t.root_priors = NULL
        if priors is None or r == NULL:
            return
        count = node_edges_in_prior_order(&self.t, r, order)
        if len(priors) != count:
            raise ValueError("priors must align with root_edges()")
        self.t.root_priors = <float*>malloc(self.t.num_positions * sizeof(float))
        for i in range(self.t.num_positions):
            self.t.root_priors[i] = -1.0
        for i in range(count):
            self.t.root_priors[order[i]] = priors[i]

    def _xy(self, int loc):
        if loc == PASS_LOC:
            return None
        return (loc_x(<Loc>loc, self.t.x_size), loc_y(<Loc>loc, self.t.x_size))

    # -- debugging / tests ----------------------------------------------------------------------------
    def total_virtual_losses(self):
        """Sum of virtual losses over the whole tree (0 between batches)."""
        return graph_virtual_losses(&self.t)

    def node_count(self):
        """Distinct nodes reachable from the root (a transposition counts once)."""
        return graph_node_count(&self.t)

    def table_node_count(self):
        """Nodes held in the graph-search node table (every node but the root; 0 in tree search)."""
        return self.t.node_table_count

    def check_invariants(self):
        """Visits of each expanded node = 1 + its children's edge visits, allowing for uncounted and extra leaf visits,
        and the priors the child slots and nodes keep equal to their policy rows."""
        return graph_visits_consistent(&self.t)


cdef int _check_batch_size(const TreeCore* t, int n) except -1:
    if not 0 <= n <= t.max_batch:
        raise ValueError(f"a batch holds 0..{t.max_batch} leaves, not {n}")
    return 0


cdef Node* _node_after(SearchTree tree, moves) except? NULL:
    """The node reached from the root by moves ((x, y) or None), or NULL."""
    cdef Node* n = tree.t.root
    cdef Loc loc
    cdef int i
    for xy in moves:
        if n == NULL:
            return NULL
        loc = tree._loc(xy)
        for i in range(n.num_children):
            if n.children[i].move == loc:
                n = n.children[i].node
                break
        else:
            return NULL
    return n


cdef Color _color_of(value) except? 99:
    if value is None:
        return C_EMPTY
    if isinstance(value, int):
        return <Color>value
    text = str(value).strip().upper()
    if text in ("B", "BLACK"):
        return C_BLACK
    if text in ("W", "WHITE"):
        return C_WHITE
    return C_EMPTY


# Board-index array length the avoid lists use (katacli.search.restrictions).
MAX_ARR_SIZE_PY = MAX_ARR_SIZE
