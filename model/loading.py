"""Open a model file someone trained: ours (`heads-positions train --out`) or nanoGPT's (`ckpt.pt` + `meta.pkl`).

load_model(path) returns the GPT in eval mode and float32, its tokenizer and a description, or raises
ModelFileError with one line naming the file and the reason. Nothing in a file is run: weights come through
torch.load(weights_only=True), and meta.pkl through an unpickler that builds no object but plain data.

nanoGPT's GPT (karpathy/nanoGPT, model.py) is ours with other names: the same pre-LayerNorm blocks, learned
positions (wpe), c_attn split into q, k, v in that order, the exact GELU, LayerNorm eps 1e-5, and lm_head tied to
wte. Its `bias` setting maps to GPTConfig.bias.
"""

import io
import pickle
import re
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import torch

from model.assets import model_name
from model.checkpoint import TIED
from model.errors import ConfigError, ModelFileError
from model.gpt import GPT, GPTConfig
from model.tokenizer import CharTokenizer, TableTokenizer


@dataclass(frozen=True)
class Limits:
    """What a model may be to be served here: every compare runs it (and three untrained models of its width)
    on two CPU cores, within the time a student waits for a keystroke. nanoGPT's shakespeare_char (6 layers x
    6 heads x 384, block 256, vocab 65, 10.7 M parameters) fits with room."""

    n_layer: int = 12
    n_head: int = 16
    n_embd: int = 768
    block_size: int = 1024  # rows of pos_emb, and the training length
    vocab_size: int = 10_000  # characters: the Tang poems need 4,000 for 99% of their text
    params: int = 30_000_000  # GPT-2 small (124 M) is well past this


LIMITS = Limits()
GPT2_VOCABS = (50257, 50304)  # GPT-2's BPE vocabulary, and nanoGPT's padding of it


@dataclass(frozen=True)
class ModelDescription:
    """What the app lists for a loaded model."""

    name: str  # a default name, from the file (the app may give another)
    format: str  # "heads-positions" or "nanogpt"
    position: str
    n_layer: int
    n_head: int
    n_embd: int
    block_size: int
    vocab_size: int
    params: int
    val_loss: float | None  # nats per character, when the file records one
    path: str


class LoadedModel(NamedTuple):
    model: GPT
    tokenizer: CharTokenizer
    description: ModelDescription


def load_model(path: str | Path, meta: str | Path | None = None) -> LoadedModel:
    """Our checkpoint or a nanoGPT one; meta: nanoGPT's meta.pkl, when it is not beside the checkpoint or at
    data/<config['dataset']>/meta.pkl next to it or one folder up (nanoGPT's own layout: out-*/ckpt.pt, data/)."""
    path = Path(path)
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise ModelFileError(path, "no such file") from None
    except IsADirectoryError:
        raise ModelFileError(path, "a folder, not a checkpoint file") from None
    except Exception as error:  # torch raises many kinds: a zip, pickle, key or unpickler error
        raise ModelFileError(path, _unreadable(path, error)) from None
    if isinstance(payload, dict) and {"config", "weights", "vocab"} <= payload.keys():
        _dicts(path, payload, "config", "weights", "vocab")
        return _ours(path, payload)
    if isinstance(payload, dict) and {"model", "model_args"} <= payload.keys():
        _dicts(path, payload, "model", "model_args")
        return _nanogpt(path, payload, Path(meta) if meta else None)
    raise ModelFileError(path, "neither a heads-positions checkpoint (config, weights, vocab) nor a nanoGPT one "
                               "(model, model_args)")


def _dicts(path: Path, payload: dict, *keys: str) -> None:
    for key in keys:
        if not isinstance(payload[key], dict):
            raise ModelFileError(path, f"its {key} is a {type(payload[key]).__name__}, not a dict")


def _ours(path: Path, payload: dict) -> LoadedModel:
    try:
        cfg = GPTConfig(**payload["config"])
        tokenizer = CharTokenizer.from_dict(payload["vocab"])
    except (TypeError, ValueError, KeyError) as error:
        raise ModelFileError(path, f"its config or vocabulary is not ours ({_first_line(error)})") from None
    if tokenizer.vocab_size != cfg.vocab_size:
        raise ModelFileError(path, f"its vocabulary has {tokenizer.vocab_size} ids but its config {cfg.vocab_size}")
    weights = _tensors(path, payload["weights"].items())
    meta = payload.get("meta") or {}
    model = _build(path, cfg, weights)
    return LoadedModel(model, tokenizer, _describe(path, model_name(path), "heads-positions", model,
                                                   meta.get("val_loss")))


# nanoGPT's parameter names -> ours; N is the block.
_NANO_NAMES = [
    (r"transformer\.wte\.", "tok_emb."), (r"transformer\.wpe\.", "pos_emb."),
    (r"transformer\.h\.(\d+)\.attn\.c_attn\.", r"blocks.\1.attn.qkv."),
    (r"transformer\.h\.(\d+)\.attn\.c_proj\.", r"blocks.\1.attn.proj."),
    (r"transformer\.h\.(\d+)\.mlp\.c_fc\.", r"blocks.\1.mlp.fc."),
    (r"transformer\.h\.(\d+)\.mlp\.c_proj\.", r"blocks.\1.mlp.proj."),
    (r"transformer\.h\.(\d+)\.ln_", r"blocks.\1.ln_"), (r"transformer\.ln_f\.", "ln_f."),
]
_NANO_MASK = re.compile(r"transformer\.h\.\d+\.attn\.bias")  # the causal mask buffer of torch < 2's slow path


def _nanogpt(path: Path, payload: dict, meta: Path | None) -> LoadedModel:
    args, config = payload["model_args"], payload.get("config") or {}
    vocab_size = args.get("vocab_size")
    vocab = _vocabulary(path, meta, config.get("dataset"), vocab_size)
    try:
        cfg = GPTConfig(vocab_size=vocab_size, block_size=args.get("block_size"), n_layer=args.get("n_layer"),
                        n_head=args.get("n_head"), n_embd=args.get("n_embd"), bias=args.get("bias", True),
                        position="learned")
    except ConfigError as error:
        raise ModelFileError(path, f"its model_args do not make a GPT ({error})") from None
    renamed = []
    for name, tensor in payload["model"].items():
        name = name.removeprefix("_orig_mod.")  # what torch.compile leaves on every name
        if _NANO_MASK.fullmatch(name):
            continue
        for pattern, ours in _NANO_NAMES:
            name = re.sub("^" + pattern, ours, name)
        renamed.append((name, tensor))
    weights = _tensors(path, renamed)
    if not torch.equal(weights[TIED], weights["tok_emb.weight"]):
        raise ModelFileError(path, "its lm_head is not tied to wte, as nanoGPT's always is")
    model = _build(path, cfg, weights)
    tokenizer = TableTokenizer(vocab["itos"], vocab_size)
    best = payload.get("best_val_loss")  # a float, or a 0-d tensor as nanoGPT's estimate_loss returns it
    scalar = isinstance(best, (int, float)) or (isinstance(best, torch.Tensor) and best.numel() == 1)
    val_loss = float(best) if scalar else None
    return LoadedModel(model, tokenizer, _describe(path, model_name(path), "nanogpt", model, val_loss))


def _tensors(path: Path, items) -> dict:
    """The weights in float32, lm_head given as tok_emb when the file stores it once (ours does)."""
    weights = {}
    for name, tensor in items:
        if not isinstance(name, str) or not isinstance(tensor, torch.Tensor):
            raise ModelFileError(path, f"its weights hold {name!r}, which is not a named tensor")
        weights[name] = tensor.float()
    if "tok_emb.weight" not in weights:
        raise ModelFileError(path, "its weights have no token embedding (tok_emb, or nanoGPT's transformer.wte)")
    weights.setdefault(TIED, weights["tok_emb.weight"])
    return weights


def _build(path: Path, cfg: GPTConfig, weights: dict) -> GPT:
    """The GPT of cfg holding the weights, once cfg and the weights are within LIMITS."""
    _check_limits(path, cfg)
    model = GPT(cfg)
    try:
        model.load_state_dict(weights)
    except (RuntimeError, TypeError) as error:
        raise ModelFileError(path, f"its weights do not fit its config ({_first_line(error)})") from None
    return model.eval()


def num_params(cfg: GPTConfig) -> int:
    """GPT(cfg).num_params() without building it: a file's config is checked before its model takes memory."""
    C = cfg.n_embd
    # qkv 3C², proj C², fc 4C², mlp proj 4C²; biases 3C + C + 4C + C and two LayerNorms' 2C each, or their gains only.
    per_layer = 12 * C * C + (13 * C if cfg.bias else 2 * C)
    positions = cfg.block_size * C if cfg.position == "learned" else 0
    return cfg.vocab_size * C + positions + cfg.n_layer * per_layer + (2 * C if cfg.bias else C)  # + ln_f


def _check_limits(path: Path, cfg: GPTConfig) -> None:
    params = num_params(cfg)
    for field, value, limit in (("layers", cfg.n_layer, LIMITS.n_layer), ("heads", cfg.n_head, LIMITS.n_head),
                                ("width (n_embd)", cfg.n_embd, LIMITS.n_embd),
                                ("context (block_size)", cfg.block_size, LIMITS.block_size),
                                ("vocabulary", cfg.vocab_size, LIMITS.vocab_size),
                                ("parameters", params, LIMITS.params)):
        if value > limit:
            raise ModelFileError(path, f"{value:,} {field} is past this server's limit of {limit:,} "
                                       "(sized for two CPU cores)")


class PlainDataUnpickler(pickle.Unpickler):
    """Builds dicts, lists, tuples, strings, numbers, booleans and None, and refuses every class or function a
    pickle names: a __reduce__ payload needs one (os.system, builtins.eval...) and is refused before it runs."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"it names {module}.{name}, which would run on loading")

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("it refers to objects outside the file")


def read_meta(path: Path) -> dict:
    """nanoGPT's meta.pkl as plain data, checked: itos gives ids 0..n-1 each one character, stoi is its inverse."""
    try:
        data = PlainDataUnpickler(io.BytesIO(path.read_bytes())).load()
    except OSError as error:
        raise ModelFileError(path, f"cannot read it ({error.strerror})") from None
    except Exception as error:  # UnpicklingError, and what a damaged pickle raises
        raise ModelFileError(path, f"refused, a meta.pkl must be plain data: {_first_line(error)}") from None
    if not isinstance(data, dict) or not isinstance(data.get("itos"), dict) or not isinstance(data.get("stoi"), dict):
        raise ModelFileError(path, "not nanoGPT's meta.pkl: it needs dicts stoi and itos")
    itos = data["itos"]
    if sorted(itos) != list(range(len(itos))) or not all(isinstance(c, str) for c in itos.values()):
        raise ModelFileError(path, "itos must map the ids 0..n-1 to strings")
    chars = [itos[i] for i in range(len(itos))]
    if any(len(c) != 1 for c in chars) or len(set(chars)) != len(chars):
        raise ModelFileError(path, "not a character vocabulary: itos holds strings that are not single characters "
                                   "(a BPE vocabulary?), or a character twice")
    if data["stoi"] != {c: i for i, c in enumerate(chars)}:
        raise ModelFileError(path, "stoi is not the inverse of itos")
    return {"itos": chars, "vocab_size": data.get("vocab_size", len(chars))}


def _vocabulary(path: Path, meta: Path | None, dataset, vocab_size) -> dict:
    if meta is None:
        places = [path.parent / "meta.pkl"]
        if isinstance(dataset, str) and re.fullmatch(r"[\w.-]+", dataset) and dataset not in (".", ".."):
            places += [path.parent / "data" / dataset / "meta.pkl", path.parent.parent / "data" / dataset / "meta.pkl"]
        meta = next((p for p in places if p.is_file()), None)
        if meta is None:
            if vocab_size in GPT2_VOCABS:
                raise ModelFileError(path, f"a GPT-2 BPE model (vocab_size {vocab_size}) with no character "
                                           "vocabulary: this app reads character models (nanoGPT's meta.pkl) only")
            raise ModelFileError(path, f"no meta.pkl (looked in {', '.join(str(p.parent) for p in places)}); "
                                       "give it as NAME=ckpt.pt,meta=PATH")
    vocab = read_meta(meta)
    if not isinstance(vocab_size, int) or vocab_size < len(vocab["itos"]):
        raise ModelFileError(path, f"its vocab_size {vocab_size!r} is smaller than the {len(vocab['itos'])} "
                                   f"characters of {meta}")
    return vocab


def _describe(path: Path, name: str, fmt: str, model: GPT, val_loss) -> ModelDescription:
    cfg = model.config
    return ModelDescription(name=name, format=fmt, position=cfg.position, n_layer=cfg.n_layer, n_head=cfg.n_head,
                            n_embd=cfg.n_embd, block_size=cfg.block_size, vocab_size=cfg.vocab_size,
                            params=model.num_params(), val_loss=None if val_loss is None else round(float(val_loss), 4),
                            path=str(path))


def _unreadable(path: Path, error: Exception) -> str:
    """Why torch.load(weights_only=True) refused a file, without torch's advice to load it unsafely."""
    with path.open("rb") as file:
        head = file.read(4)
    if not (head.startswith(b"PK\x03\x04") or head[:1] == b"\x80"):  # a zip archive (torch.save), or a pickle
        return "not a PyTorch checkpoint (neither torch.save's zip archive nor a pickle)"
    named = re.search(r"Unsupported global: GLOBAL (\S+)", str(error))
    if named:
        return (f"refused: it holds {named.group(1)}, an object beyond tensors and plain data that could run code "
                "when loaded (weights_only)")
    return f"a damaged or unreadable checkpoint ({_first_line(error)})"


def _first_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0][:200]
