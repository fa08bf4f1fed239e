"""Train the lesson's GPT on the Tang poems, in nanoGPT's spirit: AdamW, warm-up then cosine decay,
validation on fixed windows, and a resumable state that continues exactly where it stopped.

The batches come from a private torch.Generator and dropout is 0, so a run is a pure function of its
TrainConfig: the same config gives the same curve, and a resumed run gives the same weights as an
uninterrupted one.
"""

import contextlib
import math
import pickle
import shlex
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import torch

from model.checkpoint import load_checkpoint, load_training_state, save_checkpoint
from model.corpus import load_vocab
from model.errors import ConfigError, train_extra
from model.gpt import GPT, GPTConfig, PositionMode
from model.poems import load_info, load_text
from model.tokenizer import CharTokenizer
from model.windows import spread_offsets, window_offsets, windows

try:
    import fcntl
except ImportError:  # Windows has no advisory locks: one process per run is then up to the user
    fcntl = None

BETAS = (0.9, 0.99)  # nanoGPT's choice for small character models: beta2 0.99 follows the few tokens per step
EVAL_WINDOWS_PER_FORWARD = 16  # evaluation batch: results do not depend on it; 16 ran fastest on one CPU thread
CHECK_WINDOWS = 16  # the shipped val loss is re-measured by the tests on this many windows: a fraction of a second


@dataclass(frozen=True)
class TrainConfig:
    # The model: the lesson's GPT.
    position: PositionMode = "learned"
    n_layer: int = 2  # the lesson's depth; a 3rd block costs about a quarter more per step (lm_head dominates)
    n_head: int = 4
    n_embd: int = 128
    block_size: int = 128  # the median poem is 48 characters and a line break: a window holds two or three
    # The optimisation.
    batch_size: int = 16  # 2,048 tokens a step: small enough that a run takes minutes on one CPU core
    steps: int = 10000  # 20.5 M characters, 5.7 epochs: about 40 minutes a run on one core
    lr: float = 3e-3  # in 400-step trials it beat 1e-3, 6e-3 and 1e-2 (val 6.03 against 6.10, 6.23, 6.39)
    warmup: int = 100  # linear warm-up: Adam's second moments are noise for the first steps
    min_lr: float = 3e-4  # the cosine ends at lr / 10, as in nanoGPT and Chinchilla
    weight_decay: float = 0.1  # on 2-D weights only: not on biases, LayerNorm gains
    grad_clip: float = 1.0  # the largest gradient norm; tames the first steps at this learning rate
    # The record.
    eval_every: int = 100
    eval_batches: int = 8  # eval_batches x batch_size fixed windows per split at each record
    seed: int = 0  # the initial weights and the batch order
    device: str = "auto"  # auto = cuda when present, else cpu
    out: str | None = None  # the shipped checkpoint (fp16, no training state); its resumable state is out + ".state"

    def __post_init__(self):
        if self.steps < 1 or self.warmup >= self.steps:
            raise ConfigError(f"steps ({self.steps}) must be >= 1 and greater than warmup ({self.warmup})")
        if not 0 < self.min_lr <= self.lr:
            raise ConfigError(f"min_lr ({self.min_lr}) must be in (0, lr = {self.lr}]")
        for name in ("batch_size", "eval_every", "eval_batches"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.warmup < 0 or self.weight_decay < 0:
            raise ConfigError(f"warmup ({self.warmup}) and weight_decay ({self.weight_decay}) must be >= 0")
        if not self.grad_clip > 0:  # a negative one would turn the gradients around
            raise ConfigError(f"grad_clip must be > 0, got {self.grad_clip}")
        if self.device != "auto" and _device_type(self.device) not in ("cpu", "cuda"):
            raise ConfigError(f"device must be auto, cpu, cuda or cuda:N, got {self.device!r}")

    @property
    def state_path(self) -> Path:
        return Path(f"{self.out}.state")

    def model_config(self, vocab_size: int) -> GPTConfig:
        return GPTConfig(vocab_size=vocab_size, block_size=self.block_size, n_layer=self.n_layer,
                         n_head=self.n_head, n_embd=self.n_embd, position=self.position)

    def command(self) -> str:
        """The CLI command that repeats this run, every option spelled out (device aside: the same
        run on another device differs only by floating-point rounding)."""
        args = ["heads-positions", "train"]
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name != "device" and value is not None:
                args += [f"--{f.name.replace('_', '-')}", str(value)]
        return shlex.join(args)


@dataclass(frozen=True)
class Data:
    tokenizer: CharTokenizer
    train: torch.Tensor  # (N_train,) int64: the poems joined by "\n", as one stream
    val: torch.Tensor  # (N_val,)
    val_sha256: str  # identifies the validation text in the meta of a checkpoint


def load_data() -> Data:
    """The shipped corpus and vocabulary, encoded once (about a second)."""
    tokenizer = load_vocab()
    train, val = (torch.tensor(tokenizer.encode(load_text(split)), dtype=torch.long) for split in ("train", "val"))
    return Data(tokenizer, train, val, load_info()["val"]["sha256"])


@torch.no_grad()
def evaluate(model: GPT, ids: torch.Tensor, offsets: torch.Tensor) -> float:
    """Mean next-character loss (nats) over the windows, whatever the number per forward pass."""
    model.eval()
    device = next(model.parameters()).device
    total = 0.0
    for batch in offsets.split(EVAL_WINDOWS_PER_FORWARD):
        x, y = windows(ids, batch, model.config.block_size)
        _, loss = model(x.to(device), y.to(device))
        total += loss.item() * len(batch)
    model.train()
    return total / len(offsets)


def lr_at(step: int, cfg: TrainConfig) -> float:
    """Linear warm-up to cfg.lr, then a cosine down to cfg.min_lr at the last step."""
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    progress = (step - cfg.warmup) / (cfg.steps - cfg.warmup)  # 0 -> 1
    return cfg.min_lr + 0.5 * (1.0 + math.cos(math.pi * progress)) * (cfg.lr - cfg.min_lr)


def make_optimizer(model: GPT, cfg: TrainConfig) -> torch.optim.AdamW:
    """Weight decay pulls matrices (and the tied tok_emb) towards 0; biases and LayerNorm gains keep theirs."""
    params = list(model.parameters())  # the tied lm_head/tok_emb weight appears once
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": cfg.weight_decay},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=BETAS)


def _device_type(device: str) -> str | None:
    try:
        return torch.device(device).type
    except RuntimeError:  # a name torch does not know
        return None


def resolve_device(device: str) -> torch.device:
    chosen = torch.device(("cuda" if torch.cuda.is_available() else "cpu") if device == "auto" else device)
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if chosen.type == "cuda" and (chosen.index or 0) >= count:
        raise ConfigError(f"device {device}: torch sees {count} CUDA device(s) on this machine")
    return chosen


def train(cfg: TrainConfig, data: Data | None = None, progress: bool = True, resume: bool = False,
          stop_at: int | None = None, snapshots: dict[int, Path] | None = None) -> dict:
    """Train, record, and (with cfg.out) save. Returns the record: steps, val_loss and train_loss at
    each record, tokens/s, seconds, and once finished final_val_loss (of the saved fp16 file, with out).

    resume continues from out + ".state"; stop_at ends the session after that step, leaving the state
    to resume from (a planned interruption, as the tests make). snapshots maps a step to a file that
    gets the weights as they are after that step, as a shipped checkpoint: the run itself is unchanged."""
    tqdm = train_extra("tqdm").tqdm  # before any work: a missing extra is said at once
    with _only_run(cfg):
        return _train(cfg, data or load_data(), progress, resume, stop_at, snapshots, tqdm)


@contextlib.contextmanager
def _only_run(cfg: TrainConfig):
    """One process at a time per output: two runs of one config would write the same state and snapshot files
    (a parent killed without its pool's workers leaves them training). The lock goes with the process."""
    if not cfg.out or fcntl is None:
        yield
        return
    lock_path = Path(f"{cfg.out}.lock")
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ConfigError(f"another process is training {cfg.out} (it holds {lock_path})") from None
        yield


def _train(cfg: TrainConfig, data: Data, progress: bool, resume: bool, stop_at: int | None,
           snapshots: dict[int, Path] | None, tqdm) -> dict:
    device = resolve_device(cfg.device)
    model = GPT(cfg.model_config(data.tokenizer.vocab_size), seed=cfg.seed).to(device)
    optimizer = make_optimizer(model, cfg)
    batches = torch.Generator().manual_seed(cfg.seed)  # on the CPU: the same batches on every device
    record = {"position": cfg.position, "n_layer": cfg.n_layer, "n_head": cfg.n_head, "steps": [], "val_loss": [],
              "train_loss": [], "command": cfg.command(), "tokens_per_s": None, "seconds": 0.0, "train_seconds": 0.0}
    start = 0
    if resume:
        start, record = restore(cfg, model, optimizer, batches)
    n_eval = cfg.eval_batches * cfg.batch_size
    eval_offsets = {split: spread_offsets(len(ids), cfg.block_size, n_eval)
                    for split, ids in (("train", data.train), ("val", data.val))}

    def log(step: int) -> None:
        record["steps"].append(step)
        record["val_loss"].append(round(evaluate(model, data.val, eval_offsets["val"]), 4))
        record["train_loss"].append(round(evaluate(model, data.train, eval_offsets["train"]), 4))

    session = time.perf_counter()
    if start == 0:
        log(0)
    bar = tqdm(total=cfg.steps, initial=start, disable=not progress, unit="step", desc=f"{cfg.position} h{cfg.n_head}")
    for step in range(start, cfg.steps):
        tick = time.perf_counter()
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step, cfg)
        offsets = torch.randint(len(data.train) - cfg.block_size, (cfg.batch_size,), generator=batches)
        x, y = windows(data.train, offsets, cfg.block_size)  # (B, T) each
        _, loss = model(x.to(device), y.to(device))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        optimizer.step()
        record["train_seconds"] += time.perf_counter() - tick
        done = step + 1
        tokens_per_s = done * cfg.batch_size * cfg.block_size / record["train_seconds"]
        bar.update()
        bar.set_postfix(loss=f"{loss.item():.3f}", tok_s=f"{tokens_per_s:,.0f}")
        if done % cfg.eval_every == 0 or done == cfg.steps:
            log(done)
            bar.set_postfix(val=f"{record['val_loss'][-1]:.3f}", tok_s=f"{tokens_per_s:,.0f}")
        if cfg.out and (done % cfg.eval_every == 0 or done == stop_at) and done < cfg.steps:
            save_state(cfg, model, data.tokenizer, optimizer, batches, done, record, session)
        if snapshots and done in snapshots:
            save_snapshot(Path(snapshots[done]), cfg, model, data, record, done)
        if done == stop_at:
            break
    bar.close()
    record["tokens_per_s"] = round(tokens_per_s)
    record["seconds"] = round(record["seconds"] + time.perf_counter() - session, 1)
    if done == cfg.steps:
        finish(cfg, model, data, record)
    return record


def save_state(cfg, model, tokenizer, optimizer, batches, step, record, session) -> None:
    """Everything a resumed run needs. The fp32 weights travel here: the checkpoint's fp16 copy would
    make the resumed run drift from the uninterrupted one."""
    state = {"config": asdict(cfg), "step": step, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
             "generator": batches.get_state(),
             "record": {**record, "seconds": record["seconds"] + time.perf_counter() - session}}
    save_checkpoint(cfg.state_path, model, tokenizer, {"record": record}, training_state=state)


def restore(cfg, model, optimizer, batches) -> tuple[int, dict]:
    if not cfg.out or not cfg.state_path.exists():
        raise ConfigError(f"nothing to resume: {cfg.state_path} does not exist (it is removed when a run ends)")
    try:
        state = load_training_state(cfg.state_path)
    except (OSError, EOFError, RuntimeError, pickle.UnpicklingError) as error:
        raise ConfigError(f"{cfg.state_path} cannot be read ({error}); delete it to start over") from error
    if state is None:
        raise ConfigError(f"{cfg.state_path} holds no training state; delete it to start over")
    saved = {k: v for k, v in state["config"].items() if k != "device"}
    if saved != {k: v for k, v in asdict(cfg).items() if k != "device"}:
        raise ConfigError(f"{cfg.state_path} was trained with another config: {saved}")
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    batches.set_state(state["generator"])
    return state["step"], state["record"]


def finished_record(cfg: TrainConfig) -> dict | None:
    """The record of a run of exactly this config that has ended (read from its checkpoint), or None."""
    if not cfg.out or not Path(cfg.out).exists():
        return None
    meta = load_checkpoint(cfg.out)[2]
    return meta["record"] if meta.get("train_config") == asdict(cfg) else None


def shipped_val_loss(path: Path, model: GPT, data: Data) -> tuple[float, dict]:
    """Save the fp16 file, reload it, and measure it on every window of the validation text at stride
    block_size (the inputs tile it): the loss of what ships, and the meta fields describing that slice
    so a test can recompute it."""
    save_checkpoint(path, model, data.tokenizer)
    shipped, _, _ = load_checkpoint(path)
    block_size = shipped.config.block_size
    offsets = window_offsets(len(data.val), block_size, block_size)
    val_loss = round(evaluate(shipped, data.val, offsets), 4)
    return val_loss, {
        "val_loss": val_loss,
        "val_slice": {"split": "val", "sha256": data.val_sha256, "window": block_size + 1,
                      "stride": block_size, "windows": len(offsets), "first_offset": 0},
        "check": {"windows": CHECK_WINDOWS, "val_loss": evaluate(shipped, data.val, offsets[:CHECK_WINDOWS])},
    }


def save_snapshot(path: Path, cfg: TrainConfig, model: GPT, data: Data, record: dict, step: int) -> None:
    """The weights after `step` steps of this run, shipped like a final checkpoint (fp16, measured after
    the round-trip). The run's own model and RNG are not touched, so its curve stays the same."""
    _, meta = shipped_val_loss(path, model, data)
    curve = {k: list(record[k]) for k in ("steps", "val_loss", "train_loss")}
    meta |= {"step": step, "steps": cfg.steps, "seed": cfg.seed, "train_config": asdict(cfg), "record": curve}
    save_checkpoint(path, model, data.tokenizer, meta)


def finish(cfg: TrainConfig, model: GPT, data: Data, record: dict) -> None:
    """Measure the val loss of what ships (see shipped_val_loss) and save it with its record."""
    if not cfg.out:
        offsets = window_offsets(len(data.val), cfg.block_size, cfg.block_size)
        record["final_val_loss"] = round(evaluate(model, data.val, offsets), 4)
        return
    record["final_val_loss"], meta = shipped_val_loss(Path(cfg.out), model, data)
    meta |= {"steps": cfg.steps, "seed": cfg.seed, "tokens_per_s": record["tokens_per_s"], "command": record["command"],
             "train_config": asdict(cfg), "record": record}
    save_checkpoint(cfg.out, model, data.tokenizer, meta)
    cfg.state_path.unlink(missing_ok=True)
