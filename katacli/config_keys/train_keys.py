"""Keys of ``kata train`` (katacli's own: KataGo trains with python scripts and command-line flags).

Defaults follow KataGo's ``train.py`` and ``shuffle.py`` (per-sample learning rate 3e-5 x lrScale,
SGD with momentum 0.9, lookahead 6/0.5, SWA over 8 snapshots, a warmup over the first 2M samples,
a power-law window over the newest rows); small experiments mostly shrink the sample counts. The
same default holds in every mode. Command-line flags of ``kata train`` override these keys.
"""
from __future__ import annotations

from katacli.config_keys.builders import (
    bool_key, choice_key, enabled_key, float_key, int_key, list_key, section, str_key,
)
from katacli.config_keys.spec import ValueKind

MODEL_KIND_DEFAULT = "b6c96"
# Upper bound on sample and row counts: far beyond any run, small enough to print.
MAX_SAMPLE_COUNT = 10**15
MAX_SEED = 2**62
MAX_BATCH_SIZE = 1 << 16
MAX_LOSS_SCALE = 1000.0
MAX_LR_FACTOR = 100.0
# Number of horizons of the temporal-difference value heads (long, mid, short term).
NUM_TD_VALUE_HEADS = 3
TRAIN_DEVICES = ("auto", "cpu", "cuda")


def _choice(name: str, default: str, choices: tuple[str, ...], description: str):
    return choice_key(name, default, choices, description, choices_ignore_case=True)


TRAIN_DATA_KEYS = section("Training data and output", [
    str_key("dataDir", "", "Directory of training files (.h5/.npz, searched recursively)."),
    str_key("outputDir", "", "Directory for checkpoints, metrics.jsonl and the loss plot."),
    str_key("exportDir", "", "Directory to export .bin.gz models into (selfplay watches it); empty: no export."),
    str_key("exportPrefix", "",
            "Exported model names start with this (default kata-<architecture>, e.g. kata-b6c96)."),
    str_key("modelKind", MODEL_KIND_DEFAULT, "Architecture of a fresh net: b6c96, b10c128, b18c384nbt, ..."),
    str_key("initModel", "", "Start a fresh run from this KataGo .bin.gz net instead of random weights."),
    int_key("maxSamples", 0, 0, MAX_SAMPLE_COUNT,
            "Stop after this many training samples in total (0: run until interrupted)."),
])

TRAIN_WINDOW_KEYS = section("Training batches and data window", [
    int_key("batchSize", 256, 1, MAX_BATCH_SIZE,
            "Rows per batch on each process (the global batch is this times the world size)."),
    int_key("samplesPerEpoch", 1_000_000, 1, MAX_SAMPLE_COUNT,
            "Samples between rescans of the data dir (new window, new shuffle)."),
    int_key("windowMinRows", 250_000, 1, MAX_SAMPLE_COUNT,
            "The window over the newest rows is at least this big (KataGo shuffle -min-rows)."),
    int_key("windowMaxRows", 0, 0, MAX_SAMPLE_COUNT, "Cap on the window size (0: none)."),
    float_key("windowExpandPerRow", 0.4, 0.0, 1.0,
              "Window growth per new row beyond windowMinRows (-expand-window-per-row)."),
    float_key("windowTaperExponent", 0.675, 0.01, 1.0, "Power law of the window growth (-taper-window-exponent)."),
    float_key("validationFraction", 0.0, 0.0, 0.5,
              "Share of the data files held out of training and validated after each epoch (metrics_val.jsonl), "
              "picked by a hash of the file name as KataGo's shuffle.sh picks its val files (it holds out 0.05); "
              "0: no validation."),
    int_key("maxValidationSamples", 10_000, 1, MAX_SAMPLE_COUNT,
            "Rows of the newest held-out files each validation evaluates."),
    bool_key("randomSymmetries", True, "Train each batch in a random board symmetry."),
    bool_key("historyDropout", True, "Randomly hide move history (2% per step), as KataGo does."),
    float_key("maxTrainSamplesPerNewRow", 0.0, 0.0, 1e6,
              "Throttle for training beside a running self-play: each new data row allows this many samples, an "
              "epoch waits until it has enough (KataGo -max-train-bucket-per-new-data); 0: no limit."),
    int_key("maxTrainBucketSamples", 0, 0, MAX_SAMPLE_COUNT,
            "Cap on the allowance that builds up while data comes faster than training (0: none)."),
    float_key("dataPollSeconds", 10.0, 0.01, 3600.0, "While throttled, look for new data this often."),
])

# A clipping threshold scaled to 0 clips every gradient to nothing: the net would never learn.
MIN_GNORM_CLIP_SCALE = 0.001

TRAIN_OPTIMIZER_KEYS = section("Training optimizer and schedule", [
    _choice("optimizer", "sgd", ("sgd", "adamw"), "sgd (momentum 0.9, KataGo's default) or adamw."),
    float_key("lrScale", 1.0, 0.0, 1000.0, "Multiplier on KataGo's per-sample learning rate of 3e-5."),
    str_key("lrSchedule", "",
            "Piecewise lrScale by samples, e.g. (0,1.0),(20M,0.5),(40M,0.25) (replaces lrScale)."),
    int_key("lrWarmupSamples", 2_000_000, 0, MAX_SAMPLE_COUNT,
            "Length of KataGo's stepped LR warmup from 1/20 to 1 (0: no warmup)."),
    float_key("headLrFactor", 0.5, 0.0, MAX_LR_FACTOR, "LR factor for the output heads."),
    float_key("noregLrFactor", 1.0, 0.0, MAX_LR_FACTOR, "LR factor for biases and norm parameters."),
    float_key("gnormClipScale", 1.0, MIN_GNORM_CLIP_SCALE, 1e9,
              "Multiplier on KataGo's gradient-norm clipping threshold (at least 0.001: 0 would clip every gradient away)."),
    int_key("lookaheadK", 6, 0, 1000, "Lookahead optimizer: sync the slow weights every k steps (0: off)."),
    float_key("lookaheadAlpha", 0.5, 0.01, 1.0, "Lookahead step towards the fast weights."),
    float_key("swaScale", 8.0, 0.0, 1e6,
              "Exported nets average about this many SWA snapshots (0: export the raw net)."),
    int_key("swaPeriodSamples", 0, 0, MAX_SAMPLE_COUNT, "Samples between SWA snapshots (0: half of samplesPerEpoch)."),
])

TRAIN_LOSS_KEYS = section("Training losses", [
    float_key("softPolicyWeightScale", 8.0, 0.0, MAX_LOSS_SCALE, "Scale of the soft policy losses."),
    float_key("valueLossScale", 0.6, 0.0, MAX_LOSS_SCALE, "Scale of the game-result loss."),
    list_key("tdValueLossScales", ValueKind.LIST_FLOAT, (0.6,) * NUM_TD_VALUE_HEADS,
             "Scales of the long/mid/short-term value losses.", 0.0, MAX_LOSS_SCALE),
    float_key("sekiLossScale", 1.0, 0.0, MAX_LOSS_SCALE, "Scale of the seki loss."),
    float_key("varianceTimeLossScale", 1.0, 0.0, MAX_LOSS_SCALE, "Scale of the variance-time loss."),
    bool_key("disableOptimisticPolicy", False, "Train optimistic policies as plain (half-weight) policies."),
])

TRAIN_BOOKKEEPING_KEYS = section("Training checkpoints, exports and metrics", [
    int_key("checkpointEverySamples", 0, 0, MAX_SAMPLE_COUNT, "Samples between checkpoints (0: once per epoch)."),
    int_key("exportEverySamples", 0, 0, MAX_SAMPLE_COUNT, "Samples between exports (0: once per epoch)."),
    int_key("metricsEverySamples", 25_600, 1, MAX_SAMPLE_COUNT,
            "Most samples between metrics.jsonl lines (lines come after 1, 2, 4, ... batches until then)."),
    int_key("seed", -1, -1, MAX_SEED,
            "Seed of data order, augmentation and new weights (-1: random, then stored in the checkpoint)."),
])

TRAIN_HARDWARE_KEYS = section("Training hardware", [
    _choice("device", "auto", TRAIN_DEVICES, "auto (CUDA when present), cpu or cuda."),
    _choice("mixedPrecision", "auto", ("auto", "off", "bf16", "fp16"),
            "auto (bf16 on CUDA if supported, else fp16), off, bf16, fp16; CUDA only."),
    enabled_key("compile", "torch.compile the net: auto (on CUDA, not on the CPU), true or false. On a GPU it pays "
                           "(an H100, b18c384nbt bf16, batch 256: 2,770 -> 3,861 samples/s); the first steps wait a "
                           "minute or two for the compile, and a compile that fails is logged and training goes on "
                           "without it."),
    int_key("numCpuThreads", 0, 0, 1024, "Torch CPU threads (0: torch's default)."),
])

TRAIN_KEYS = (TRAIN_DATA_KEYS + TRAIN_WINDOW_KEYS + TRAIN_OPTIMIZER_KEYS + TRAIN_LOSS_KEYS + TRAIN_BOOKKEEPING_KEYS
              + TRAIN_HARDWARE_KEYS)
