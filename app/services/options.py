"""GET /api/options: what the page may offer, read from the loaded models."""

from app.domain.lesson_steps import LESSON_LINES, LESSON_SHAPE
from app.schemas.ablation import MAX_ABLATE_CHARS
from app.schemas.classes import CLASS_RULES
from app.schemas.compare import HEAD_CHOICES, MAX_DISTANCE, MAX_LINE_CHARS, N_LAYER_MAX, CompareRequest
from app.services.i18n import LANGS
from app.services.registry import ModelRegistry
from model.gpt import POSITION_MODES, GPTConfig


def max_chars(position: str) -> int:
    return GPTConfig(vocab_size=1, position=position).max_positions


# Two lines with the same characters in another order, as the lesson's, for models that read other scripts: the
# first whose characters the model knows.
OTHER_LINES = (("the dog bit the man", "the man bit the dog"), ("THE DOG BIT THE MAN", "THE MAN BIT THE DOG"),
               ("le chien mord l'homme", "l'homme mord le chien"))


def start_lines(tokenizer) -> tuple[list[str], bool]:
    """Two lines to start from, and whether they are the lesson's: the lesson's when the vocabulary holds their
    characters, else the first of OTHER_LINES it holds, else the first five printable characters of the vocabulary
    and the same five reversed."""
    def known(line: str) -> bool:
        return not any(tokenizer.encode(line).unknown)

    lesson = [LESSON_LINES["line_a"], LESSON_LINES["line_b"]]
    if all(map(known, lesson)):
        return lesson, True
    pair = next((list(p) for p in OTHER_LINES if all(map(known, p))), None)
    if pair is None:
        chars = "".join(c for c in tokenizer.chars if c.isprintable() and not c.isspace())[:5]
        pair = [chars, chars[::-1]]
    return pair, False


def served_models(registry: ModelRegistry) -> list[dict]:
    listed = []
    for name, (model, tokenizer, desc) in registry.operator.items():
        cfg = model.config
        lines, lesson = start_lines(tokenizer)
        listed.append({"name": name, "format": desc.format, "position": cfg.position, "n_layer": cfg.n_layer,
                       "n_head": cfg.n_head, "n_embd": cfg.n_embd, "head_dim": cfg.head_dim,
                       "block_size": cfg.block_size, "vocab_size": cfg.vocab_size, "params": desc.params,
                       "val_loss": desc.val_loss, "max_chars": min(cfg.max_positions, MAX_LINE_CHARS),
                       "lines": lines, "lesson_lines": lesson})
    return listed


def options(registry: ModelRegistry) -> dict:
    trained = {}
    for position, (model, meta) in registry.trained.items():
        cfg = model.config
        trained[position] = {"n_layer": cfg.n_layer, "n_head": cfg.n_head, "n_embd": cfg.n_embd,
                             "block_size": cfg.block_size, "val_loss": meta.get("val_loss")}
    return {
        "positions": list(POSITION_MODES),
        "n_head": list(HEAD_CHOICES),
        "n_layer_max": N_LAYER_MAX,
        "max_chars": {p: max_chars(p) for p in POSITION_MODES},
        "max_distance": MAX_DISTANCE,
        "trained": trained,
        "random": dict(LESSON_SHAPE),
        "defaults": CompareRequest().model_dump(),
        "models": served_models(registry),
        "langs": list(LANGS),
        "max_ablate_chars": MAX_ABLATE_CHARS,
        "classes": CLASS_RULES.model_dump(),
    }
