#!/usr/bin/env python3
"""Distil a network's own searches of opening positions into its policy (one policy-improvement step).

Self-play trains the policy towards the search's visit distribution everywhere; this does the same,
concentrated on the first moves of the boards named, where a small net's prior can be far from what
its own search prefers. katacli's default net (trained on 7x7-13x13) puts 45% of its 19x19 empty-board
policy on the 2nd line while its search, 200 to 1,500 visits, spends most visits on lines 3-5.

    generate: random openings (0 to 12 moves, each sampled from the search's visits) on --sizes,
              every position searched with --visits (the net's own search, `katacli.analyze`);
              the target is the search's visit distribution.
    fine-tune: the policy head's main channel learns the targets (cross-entropy); the value, score
              and ownership outputs are held to the original net's on the same positions (the
              trunk is shared), so only the policy moves.

    .venv/bin/python examples/distill_openings.py --model katacli/nets/default.bin.gz --out distilled.bin.gz \\
        --sizes 19,19,19,17,15,13,9 --positions 3000 --visits 600 --processes 2 --rows-out rows.json

It prints the empty-board policy by line (distance from the edge) before and after. Generated rows
can be kept (--rows-out) and reused (--rows-in) to try other training settings, e.g. on the big boards
only (--train-sizes 15,17,19), with the small boards' positions held to the original net's policy
(--anchor-sizes 9,13: the trunk is shared, so a change learnt on 19x19 can move 13x13 play too).
Uses only the network's own search: no other network's data.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import signal
import sys
import time
from pathlib import Path

import numpy as np

# Openings end after this many moves at most (each a position to learn from).
OPENING_DEPTHS = (0, 0, 1, 2, 3, 4, 5, 6, 8, 10, 12)
KOMI = 7.5
SEARCH_SEED_BITS = 63   # each search's seed, drawn from the run's
BATCH = 32
# The written network's name: its source's, with this added.
NAME_SUFFIX = "-distilled"
# Weights of the penalties that hold the value and the score/ownership outputs to the original net's.
VALUE_ANCHOR = 2.0
SCORE_ANCHOR = 0.5


def generate(model: str, sizes: list[int], count: int, visits: int, seed: int) -> list[dict]:
    """``count``-odd rows {size, moves, target} from random openings searched with ``visits``."""
    import katacli

    rng = random.Random(seed)
    net = katacli.load_network(model, seed=seed)   # its random symmetries, and each search below, seeded: one
    # seed gives the same rows on every run
    rows: list[dict] = []
    while len(rows) < count:
        size = rng.choice(sizes)
        game = katacli.Game(size, komi=KOMI)
        moves: list[list[str]] = []
        for step in range(rng.choice(OPENING_DEPTHS) + 1):
            result = katacli.analyze(game, net, visits=visits, seed=rng.getrandbits(SEARCH_SEED_BITS))
            visited = [(m.move, m.visits) for m in result.moves if m.visits > 0]
            total = sum(v for _, v in visited)
            rows.append({"size": size, "moves": list(moves), "target": [[m, v / total] for m, v in visited]})
            if _searched is not None:
                with _searched.get_lock():
                    _searched.value += 1
            move = rng.choices([m for m, _ in visited], weights=[v for _, v in visited])[0]
            if move is None or move == "pass" or len(rows) >= count:
                break
            color = "B" if len(moves) % 2 == 0 else "W"
            game.play(color, move)
            moves.append([color, move])
    return rows


# Seconds between progress lines while positions are searched.
PROGRESS_PERIOD = 30.0
_searched = None   # a worker's shared count of positions searched (set by _count_into)


def _count_into(counter) -> None:
    global _searched
    _searched = counter
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the parent's to handle: it stops the workers


def generate_in_processes(jobs: list[tuple], total: int, started: float) -> list[dict]:
    """generate() over the jobs in one process each, a progress line every PROGRESS_PERIOD seconds."""
    counter = multiprocessing.Value("i", 0)
    pool = multiprocessing.Pool(len(jobs), initializer=_count_into, initargs=(counter,))
    try:
        parts = [pool.apply_async(generate, job) for job in jobs]
        for part in parts:
            part.wait(PROGRESS_PERIOD)
            while not part.ready():
                elapsed, done = time.monotonic() - started, counter.value
                left = f", about {elapsed * (total - done) / done / 60:.0f} min left" if done else ""
                print(f"searched {done} of {total} positions ({elapsed / 60:.1f} min{left})", flush=True)
                part.wait(PROGRESS_PERIOD)
        rows = [row for part in parts for row in part.get()]
    except KeyboardInterrupt:
        raise KeyboardInterrupt(f"after {counter.value} of {total} positions searched") from None
    finally:
        pool.terminate()
    return rows


def encode(rows: list[dict], anchor_sizes: frozenset[int] = frozenset()) -> dict[int, list[tuple]]:
    """Rows as network inputs, target vectors (board points then pass) and whether the row is an anchor
    (its target is then the original net's own policy, filled in while training), grouped by board size."""
    import katacli
    from katacli._core.features import encode_v7
    from katacli.game.coords import flat_index, parse_vertex

    by_size: dict[int, list[tuple]] = {}
    for row in rows:
        size = row["size"]
        game = katacli.Game(size, komi=KOMI)
        for color, move in row["moves"]:
            game.play(color, move)
        spatial = np.zeros((22, size, size), np.float32)
        global_features = np.zeros(19, np.float32)
        legal = np.zeros(size * size + 1, np.uint8)
        encode_v7(game.state, 0, spatial, global_features, legal)
        target = np.zeros(size * size + 1, np.float32)
        for move, share in row["target"]:
            index = size * size if move in (None, "pass") else flat_index(parse_vertex(move, size, size), size, size)
            target[index] += share
        anchor = np.bool_(size in anchor_sizes)
        by_size.setdefault(size, []).append((spatial, global_features, legal.astype(bool), target, anchor))
    return by_size


def fine_tune(model_path: str, rows: list[dict], out: str, epochs: int, lr: float, seed: int,
              anchor_sizes: frozenset[int] = frozenset(), policy_head_only: bool = False) -> list[dict]:
    """Train the policy on the rows' targets (the original net's policy on ``anchor_sizes``' rows), the
    other outputs held to the original's; write ``out``. With ``policy_head_only`` only the policy head's
    weights train (the trunk, so the value, score and ownership, stay exactly as they were).
    Returns the per-epoch mean losses."""
    import torch

    from katacli.nn.export import export_model
    from katacli.nn.torch_model import load_model

    torch.manual_seed(seed)
    model, original = load_model(model_path), load_model(model_path)
    trained = model.policy_head.parameters() if policy_head_only else model.parameters()
    optimizer = torch.optim.Adam(trained, lr=lr)
    batches = []
    for size, items in encode(rows, anchor_sizes).items():
        random.Random(seed + size).shuffle(items)
        for start in range(0, len(items), BATCH):
            batches.append(tuple(torch.from_numpy(np.stack(x)) for x in zip(*items[start:start + BATCH])))
    history = []
    for epoch in range(epochs):
        random.Random(seed + epoch).shuffle(batches)
        sums = {"policy": 0.0, "value": 0.0, "score": 0.0}
        for spatial, global_features, legal, target, anchor in batches:
            new = model(spatial, global_features, None, mask_full=True)
            with torch.no_grad():
                old = original(spatial, global_features, None, mask_full=True)
            logits = policy_logits(new, legal)
            if anchor.any():
                target = torch.where(anchor[:, None], torch.softmax(policy_logits(old, legal), 1), target)
            policy_loss = -(target * torch.log_softmax(logits, 1)).sum(1).mean()
            value_loss = torch.nn.functional.kl_div(torch.log_softmax(new.value, 1), torch.softmax(old.value, 1),
                                                    reduction="batchmean")
            score_loss = ((new.score_value - old.score_value) ** 2).mean() + ((new.ownership - old.ownership) ** 2).mean()
            loss = policy_loss + VALUE_ANCHOR * value_loss + SCORE_ANCHOR * score_loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            sums["policy"] += policy_loss.item()
            sums["value"] += value_loss.item()
            sums["score"] += score_loss.item()
        history.append({k: v / len(batches) for k, v in sums.items()})
        print(f"epoch {epoch + 1}/{epochs}: policy cross-entropy {history[-1]['policy']:.4f}, value KL "
              f"{history[-1]['value']:.5f}, score/ownership drift {history[-1]['score']:.5f}", flush=True)
    export_model(model.eval(), out, name=f"{original.name}{NAME_SUFFIX}")
    return history


def policy_logits(output, legal):
    """The main policy channel's logits over board points then pass, illegal moves masked out."""
    import torch

    n = output.policy.shape[0]
    return torch.cat([output.policy[:, 0].reshape(n, -1), output.policy_pass[:, :1]], 1).masked_fill(~legal, -1e9)


def line_profile(model: str, size: int) -> dict[int, float]:
    """The empty board's policy summed by line (1 = the edge)."""
    import katacli

    policy = np.asarray(katacli.load_network(model).evaluate(katacli.Game(size, komi=KOMI)).policy)
    lines: dict[int, float] = {}
    for y in range(size):
        for x in range(size):
            line = min(x, y, size - 1 - x, size - 1 - y) + 1
            lines[line] = lines.get(line, 0.0) + float(policy[y][x])
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="the network to improve (a KataGo model file)")
    parser.add_argument("--out", required=True, help="where to write the fine-tuned network")
    parser.add_argument("--sizes", default="19,19,19,17,15,13,9", help="board sizes to draw openings from")
    parser.add_argument("--positions", type=int, default=3000)
    parser.add_argument("--visits", type=int, default=600)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--processes", type=int, default=1, help="processes generating positions")
    parser.add_argument("--rows-out", help="keep the generated rows here (JSON)")
    parser.add_argument("--rows-in", help="train on rows generated before (a --rows-out file) instead of generating")
    parser.add_argument("--train-sizes", help="train only on the positions of these board sizes (e.g. 15,17,19: "
                                              "leave the small boards' policy as it is)")
    parser.add_argument("--anchor-sizes", help="also train on these boards' positions, towards the original net's own "
                                               "policy (e.g. 9,13: hold the small boards' play where it is)")
    parser.add_argument("--policy-head-only", action="store_true",
                        help="train the policy head's weights only (value, score and ownership stay exactly)")
    parser.add_argument("--log-out", help="write what was done here (JSON: the options, times, losses, the "
                                          "empty-board policy by line before and after)")
    args = parser.parse_args()
    try:
        sizes = [int(s) for s in args.sizes.split(",")]
        train_sizes = {int(s) for s in args.train_sizes.split(",")} if args.train_sizes else None
        anchor_sizes = frozenset(int(s) for s in args.anchor_sizes.split(",")) if args.anchor_sizes else frozenset()
    except ValueError:
        sys.exit("--sizes, --train-sizes and --anchor-sizes take board sizes separated by commas")
    if train_sizes is not None and train_sizes & anchor_sizes:
        sys.exit("a board size is either trained on (--train-sizes) or held (--anchor-sizes), not both")
    if not Path(args.model).is_file():
        sys.exit(f"model not found: {args.model}")
    started = time.monotonic()
    generate_seconds = 0.0
    generated_by = None
    if args.rows_in:
        saved = json.loads(Path(args.rows_in).read_text())
        rows, generated_by = saved["rows"], saved["options"]
    else:
        shares = [args.positions // args.processes + (i < args.positions % args.processes)
                  for i in range(args.processes)]
        jobs = [(args.model, sizes, share, args.visits, args.seed * 1000 + i) for i, share in enumerate(shares)]
        rows = generate_in_processes(jobs, args.positions, started)
        generate_seconds = time.monotonic() - started
        print(f"{len(rows)} positions searched at {args.visits} visits in {generate_seconds:.0f} s", flush=True)
        generated_by = {"model": args.model, "sizes": args.sizes, "positions": args.positions, "visits": args.visits,
                        "seed": args.seed, "processes": args.processes, "seconds": round(generate_seconds, 1)}
        if args.rows_out:
            Path(args.rows_out).write_text(json.dumps({"options": generated_by, "rows": rows}))
    if train_sizes is not None:
        rows = [row for row in rows if row["size"] in train_sizes | anchor_sizes]
        print(f"training on the {len(rows)} positions of boards {sorted(train_sizes | anchor_sizes)}"
              + (f" ({sorted(anchor_sizes)} held to the original policy)" if anchor_sizes else ""), flush=True)
    history = fine_tune(args.model, rows, args.out, args.epochs, args.lr, args.seed, anchor_sizes,
                         args.policy_head_only)
    lines = {}
    for size in sorted(set(sizes), reverse=True):
        before, after = line_profile(args.model, size), line_profile(args.out, size)
        lines[size] = {"before": before, "after": after}
        print(f"{size}x{size} empty-board policy by line, before -> after: "
              + ", ".join(f"{line}: {before[line]:.2f} -> {after[line]:.2f}" for line in sorted(before) if line <= 5))
    seconds = time.monotonic() - started
    print(f"written {args.out} ({seconds:.0f} s in all)")
    if args.log_out:
        options = {k: v for k, v in vars(args).items() if k not in ("log_out", "rows_out")}
        log = {"options": options, "generated_by": generated_by, "positions": len(rows),
               "generate_seconds": round(generate_seconds, 1),
               "seconds": round(seconds, 1), "epochs": history, "policy_by_line": lines}
        Path(args.log_out).write_text(json.dumps(log, indent=1) + "\n")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt as stop:
        sys.exit(f"interrupted{' ' + str(stop) if str(stop) else ''}: no network written (rows already saved "
                 "with --rows-out stay)")
