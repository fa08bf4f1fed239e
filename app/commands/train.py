"""`heads-positions train`: train one model on the shipped corpus and save it."""

import argparse
import sys
from dataclasses import fields
from pathlib import Path

import torch

from model.errors import ConfigError, DataError
from model.gpt import POSITION_MODES
from model.train import TrainConfig, train

# One option per TrainConfig field, so TrainConfig.command() always names options that exist.
HELP = {
    "position": "how the model knows order: learned (GPT-2's pos_emb), rope, none (NoPE)",
    "n_layer": "transformer blocks",
    "n_head": "attention heads per block; must divide --n-embd",
    "n_embd": "width of the residual stream",
    "block_size": "characters per training window",
    "batch_size": "windows per step",
    "steps": "optimizer steps in the whole run",
    "lr": "peak learning rate, reached after --warmup steps",
    "warmup": "steps of linear warm-up",
    "min_lr": "learning rate at the last step, after the cosine decay",
    "weight_decay": "AdamW decay of the 2-D weights",
    "grad_clip": "largest gradient norm",
    "eval_every": "steps between records of the train and val loss",
    "eval_batches": "fixed windows per record and split, in batches",
    "seed": "seed of the initial weights and the batch order",
    "device": "auto, cpu, cuda, cuda:1, ... (auto = cuda when present)",
    "out": "checkpoint to write (fp16, no training state); the resumable state goes to OUT.state",
}


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("train", help="train a model on the Tang poems",
                                   description="Train the lesson's GPT on the shipped Tang poem corpus.")
    for f in fields(TrainConfig):
        default = getattr(TrainConfig, f.name)
        parser.add_argument(f"--{f.name.replace('_', '-')}", type=str if default is None else type(default),
                            default=default, required=default is None,
                            choices=POSITION_MODES if f.name == "position" else None,
                            help=HELP[f.name] + ("" if default is None else " (default: %(default)s)"))
    parser.add_argument("--resume", action="store_true", help="continue from OUT.state with the same options")
    parser.add_argument("--stop-at", type=int, help="stop after this step, keeping OUT.state to --resume from")
    parser.add_argument("--threads", type=int, help="CPU threads for torch (default: torch's choice)")
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace) -> int | None:
    folder = Path(args.out).parent
    if not folder.is_dir():  # checked now, not when the checkpoint is written at the end of the run
        print(f"--out: the folder {folder} does not exist", file=sys.stderr)
        return 2
    if args.threads:
        torch.set_num_threads(args.threads)
    # TrainConfig and GPTConfig name the option and its rule (steps greater than warmup, n_embd divisible by
    # n_head, a device torch knows, ...), --resume says when there is nothing to resume, and a changed corpus
    # file says how to rebuild it: a line, not a traceback. Only those (model.errors): any other error in a
    # run is a bug, and its traceback is what finds it.
    try:
        cfg = TrainConfig(**{f.name: getattr(args, f.name) for f in fields(TrainConfig)})
        record = train(cfg, resume=args.resume, stop_at=args.stop_at)
    except (ConfigError, DataError) as error:
        print(error, file=sys.stderr)
        return 2
    last = record["steps"][-1]
    if "final_val_loss" in record:
        print(f"val loss {record['final_val_loss']:.4f} (fp16 file, whole val split) after {last} steps, "
              f"{record['tokens_per_s']:,} tokens/s, {record['seconds']:.0f} s -> {cfg.out}")
    else:
        print(f"stopped after step {args.stop_at} (last record: step {last}, val loss {record['val_loss'][-1]:.4f}); "
              f"continue with --resume from {cfg.state_path}")
