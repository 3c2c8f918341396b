# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Diagnostics of a finished search for ``kata evalsgf``'s print flags (KataGo's debugging views).

graph edges        the search graph's edges, nodes numbered from the root in KataGo's reversed post
                   order (enumerateTreePostOrder); a node shared by transpositions keeps one number.
sharp score        the score averaged over the tree with children weighted by the cube of their play
                   selection value (root) or weight (below), so that the best lines dominate.
short-term errors  the network's short-term win-loss and score errors averaged shallowly over a subtree.
ending bonus       each root child's utility without and with rootEndingBonusPoints' score bonus.

All values are White's point of view. Call these only between batches (the Searcher holds its lock).
"""
from libc.stdint cimport int64_t
from libc.math cimport pow
from libc.stdlib cimport malloc, free

from katacli._core.board cimport Loc
from katacli._core.search_values cimport score_utility_diff
from katacli._core.search_nodes cimport (
    TreeCore, Node, ChildSlot, MAX_EDGES, NODE_EXPANDED, direct_weight, ending_bonus,
)
from katacli._core.search_graph cimport begin_walk
from katacli._core.search_results cimport play_selection_values, child_weight_factors, node_along, xy_of
from katacli._core.search_tree cimport SearchTree

# How deep the averaging walks go: a node whose share of the average falls below
# scale / visits ** exponent stands for its subtree (KataGo's getSharpScore and
# getShallowAverageShorttermWLAndScoreError; sublinear so the cost grows slower than the search).
cdef double SHARP_MIN_PROP_SCALE = 0.25
cdef double SHARP_MIN_PROP_EXPONENT = 0.5
cdef double SHORTTERM_MIN_PROP_SCALE = 0.25
cdef double SHORTTERM_MIN_PROP_EXPONENT = 0.625
cdef double MIN_PARENT_WEIGHT = 1e-10


cdef inline bint _has_net_eval(const Node* n) noexcept nogil:
    # KataGo's node->getNNOutput() != NULL: evaluated, and not scored as a finished game.
    return n.state == NODE_EXPANDED and not n.is_terminal


cdef void _post_order(Node* n, int64_t epoch, list out):
    """Each node once, children before parents, children in slot order (KataGo's
    enumerateTreePostOrder); a cycle back onto the walk's path counts as done."""
    cdef int i
    if n.walk_mark == epoch or n.on_path > 0:
        return
    n.on_path += 1
    for i in range(n.num_children):
        _post_order(n.children[i].node, epoch, out)
    n.on_path -= 1
    n.walk_mark = epoch
    out.append(<size_t>n)


def graph_edges(SearchTree tree):
    """(node count, edges) of the search graph: nodes numbered from the root (0) in KataGo's reversed
    post order, edges (parent, child) in that order and each parent's child order. A node reached by
    several move orders (graph search) keeps one number, so shared nodes show as several edges in."""
    cdef TreeCore* t = &tree.t
    cdef Node* n
    cdef int i
    if t.root == NULL:
        return 0, []
    order: list = []
    _post_order(t.root, begin_walk(t), order)
    order.reverse()
    index = {address: k for k, address in enumerate(order)}
    edges = []
    for k, address in enumerate(order):
        n = <Node*><size_t>address
        for i in range(n.num_children):
            edges.append((k, index[<size_t>n.children[i].node]))
    return len(order), edges


cdef bint _sharp_walk(const TreeCore* t, const Node* n, double min_prop, double desired, double* acc) noexcept nogil:
    """Add desired * n's sharp score to acc (children weighted by the cube of their weight); False
    when n has nothing to give (KataGo's getSharpScoreHelper)."""
    cdef double* weights
    cdef double rel_sum = 0.0, child_ws = 0.0, parent_w, from_children, self_prop, from_child
    cdef int i
    if not _has_net_eval(n) or desired < min_prop:
        if n.stats.visits <= 0:
            return False
        acc[0] += n.stats.score_mean * desired
        return True
    if n.num_children <= 0 or n.on_path > 0:   # a leaf, or a cycle back onto the path: its own eval
        acc[0] += n.eval.score_mean * desired
        return True
    (<Node*>n).on_path += 1
    weights = <double*>malloc(n.num_children * sizeof(double))
    child_weight_factors(t, n, 0.0, weights)
    for i in range(n.num_children):
        if n.children[i].node.stats.visits > 0:
            rel_sum += weights[i] * weights[i] * weights[i]
            child_ws += weights[i]
    parent_w = max(direct_weight(t, n), MIN_PARENT_WEIGHT)
    from_children = desired * child_ws / (child_ws + parent_w)
    self_prop = desired * parent_w / (child_ws + parent_w)
    if from_children <= 0.0 or rel_sum <= 0.0:
        self_prop += from_children
    else:
        for i in range(n.num_children):
            from_child = weights[i] * weights[i] * weights[i] / rel_sum * from_children
            if not _sharp_walk(t, n.children[i].node, min_prop, from_child, acc):
                self_prop += from_child
    free(weights)
    (<Node*>n).on_path -= 1
    acc[0] += n.eval.score_mean * self_prop
    return True


def sharp_score(SearchTree tree):
    """White's sharp score of the root (KataGo's getSharpScore): the score averaged over the tree with
    children weighted by the cube of their play selection value at the root and of their weight
    below it, so that the best lines dominate. None before the root is evaluated."""
    cdef TreeCore* t = &tree.t
    cdef Node* r = t.root
    cdef Loc locs[MAX_EDGES]
    cdef double values[MAX_EDGES]
    cdef int slots[MAX_EDGES]
    cdef int num, i
    cdef double acc = 0.0, rel_sum = 0.0, child_ws = 0.0, parent_w, from_children, self_prop, from_child, v
    cdef double min_prop
    if r == NULL or not _has_net_eval(r):
        return None
    min_prop = SHARP_MIN_PROP_SCALE / pow(max(1.0, <double>r.stats.visits), SHARP_MIN_PROP_EXPONENT)
    with nogil:
        num = play_selection_values(t, r, False, False, True, 1.0, locs, values, NULL, NULL, slots)
    if num == 0:   # no children to weigh: the plain search value
        return r.stats.score_mean if r.stats.visits > 0 else None
    for i in range(num):
        rel_sum += values[i] * values[i] * values[i]
        child_ws += values[i]
    parent_w = max(direct_weight(t, r), MIN_PARENT_WEIGHT)
    from_children = child_ws / (child_ws + parent_w)
    self_prop = parent_w / (child_ws + parent_w)
    if from_children <= 0.0 or rel_sum <= 0.0:
        self_prop += from_children
    else:
        r.on_path += 1
        with nogil:
            for i in range(num):
                v = values[i]
                from_child = v * v * v / rel_sum * from_children
                if slots[i] < 0 or not _sharp_walk(t, r.children[slots[i]].node, min_prop, from_child, &acc):
                    self_prop += from_child
        r.on_path -= 1
    return acc + r.eval.score_mean * self_prop


cdef void _shortterm_walk(const TreeCore* t, const Node* n, double min_prop, double desired, double* wl,
                          double* score) noexcept nogil:
    """Add desired * n's short-term errors averaged over its subtree, children by their weight after
    noise pruning and downweighting (KataGo's getShallowAverageShorttermWLAndScoreErrorHelper)."""
    cdef double* weights
    cdef double child_ws = 0.0, parent_w, from_children, self_prop
    cdef int i
    if not _has_net_eval(n):
        return   # a finished game has no uncertainty
    if desired < min_prop or n.on_path > 0:
        wl[0] += desired * n.eval.st_wl_error
        score[0] += desired * n.eval.st_score_error
        return
    (<Node*>n).on_path += 1
    weights = <double*>malloc((n.num_children if n.num_children > 0 else 1) * sizeof(double))
    child_weight_factors(t, n, 0.0, weights)
    for i in range(n.num_children):
        child_ws += weights[i]
    parent_w = max(direct_weight(t, n), MIN_PARENT_WEIGHT)
    from_children = desired * child_ws / (child_ws + parent_w)
    self_prop = desired * parent_w / (child_ws + parent_w)
    if from_children <= 0.0 or child_ws <= 0.0:
        self_prop += from_children
    else:
        for i in range(n.num_children):
            _shortterm_walk(t, n.children[i].node, min_prop, weights[i] / child_ws * from_children, wl, score)
    free(weights)
    (<Node*>n).on_path -= 1
    wl[0] += self_prop * n.eval.st_wl_error
    score[0] += self_prop * n.eval.st_score_error


def shortterm_errors(SearchTree tree, path=()):
    """(win-loss, score) short-term errors of the network averaged shallowly over the subtree of the node
    reached by `path` (KataGo's getShallowAverageShorttermWLAndScoreError; printTree's STWL / STS).
    (-1, -1) when the network has no short-term error heads; (0, 0) where the tree holds no such node."""
    cdef TreeCore* t = &tree.t
    cdef Node* n = node_along(t, path)
    cdef double wl = 0.0, score = 0.0, min_prop
    if n == NULL:
        return 0.0, 0.0
    if not t.cfg.nn_has_shortterm_error:
        return -1.0, -1.0
    min_prop = SHORTTERM_MIN_PROP_SCALE / pow(max(1.0, <double>n.stats.visits), SHORTTERM_MIN_PROP_EXPONENT)
    with nogil:
        _shortterm_walk(t, n, min_prop, 1.0, &wl, &score)
    return wl, score


def root_ending_bonus(SearchTree tree):
    """Per root child in slot order (KataGo's printRootEndingScoreValueBonus): dicts of move, visits,
    edge_visits, utility without and with the ending score bonus, and the bonus (White's view,
    points). Empty when the root has no ownership (the bonus is derived from it)."""
    cdef TreeCore* t = &tree.t
    cdef Node* r = t.root
    cdef const ChildSlot* s
    cdef double bonus
    cdef int i
    if r == NULL or not _has_net_eval(r) or r.ownership == NULL:
        return []
    rows = []
    for i in range(r.num_children):
        s = &r.children[i]
        bonus = ending_bonus(t, r, s.move)
        rows.append({"move": xy_of(t, s.move), "visits": int(s.node.stats.visits), "edge_visits": int(s.edge_visits),
                     "utility": s.node.stats.utility, "bonus": bonus,
                     "utility_with_bonus": s.node.stats.utility + score_utility_diff(
                         &t.cfg, s.node.stats.score_mean, s.node.stats.score_mean_sq, bonus)})
    return rows
