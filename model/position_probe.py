"""Where does a model keep order? A linear probe reads the absolute position from the vectors at each site.

Haviv et al. 2022 ("Transformer Language Models without Positional Encodings Still Learn Positional
Information") probed a model trained without positions and read its position from every layer, but not without the
causal mask. This is their measurement on our models: at each site, a ridge regression from the vector to the
position 0 .. block_size - 1.

Sites: the residual stream at ℓ = 0 .. n_layer (0 is what enters block 1: tok_emb, plus pos_emb where there is one;
ℓ is after block ℓ), and each block's attention output before proj (the heads side by side, TransformerLens's
hook_z). Every fifth window (index 4, 9, 14, ...) is the test part and the rest the fit part: a split by file order
would test on the file's last poems only. Features are standardized with the fit part's mean and standard
deviation; the ridge has λ = 1 on the standardized features and an unpenalized intercept, solved in closed form in
float64 (deterministic). Predictions are clipped to 0 .. block_size - 1.

A position that can be read out is not one the model uses: the probe shows what the vectors hold, not what the
later layers read from them (turning a head or a RoPE band off is the experiment that shows use).
"""

import torch

from model.gpt import GPT
from model.windows import windows

TEST_EVERY = 5  # windows 4, 9, 14, ... are the test part
RIDGE = 1.0  # λ on the standardized features; the intercept is not penalized
RANGES = ((0, 15), (16, 63), (64, 127))  # the position ranges the error is also given for (inclusive)
WITHIN = 2  # a prediction within ±2 positions counts as near
WINDOWS_PER_FORWARD = 32


def is_test(n_windows: int) -> torch.Tensor:
    """(W,) bool: True for windows 4, 9, 14, ... (every fifth), the test part."""
    return torch.arange(n_windows) % TEST_EVERY == TEST_EVERY - 1


def site_names(n_layer: int) -> list[dict]:
    """The sites in the order site_vectors returns them: residual ℓ = 0 .. n_layer, then z of block 1 .. n_layer."""
    return ([{"site": "residual", "layer": layer} for layer in range(n_layer + 1)]
            + [{"site": "z", "layer": layer} for layer in range(1, n_layer + 1)])


@torch.no_grad()
def site_vectors(model: GPT, x: torch.Tensor, causal: bool = True) -> list[torch.Tensor]:
    """x (W, T) ids -> one (W, T, C) float32 tensor per site, in site_names' order."""
    model.eval()
    per_batch = []
    for batch in x.split(WINDOWS_PER_FORWARD):
        trace = model.trace(batch, causal=causal, logits_at=torch.zeros(len(batch), dtype=torch.long))
        per_batch.append([trace.embedding, *trace.residual, *trace.z])
    return [torch.cat(site) for site in zip(*per_batch)]


def ridge_predict(fit_x: torch.Tensor, fit_y: torch.Tensor, test_x: torch.Tensor, ridge: float = RIDGE) -> torch.Tensor:
    """Closed-form ridge in float64: fit_x (N, C), fit_y (N,), test_x (M, C) -> (M,) predictions.

    Standardized on the fit part, the features have mean 0 there, so the unpenalized intercept is the fit
    targets' mean and the weights solve (ZᵀZ + λI) w = Zᵀ(y - ȳ). A feature constant on the fit part
    (standard deviation 0) is left at 0 rather than divided by 0."""
    fit_x, test_x, fit_y = fit_x.double(), test_x.double(), fit_y.double()
    mean, std = fit_x.mean(0), fit_x.std(0, correction=0)
    std = torch.where(std > 0, std, 1.0)
    z = (fit_x - mean) / std  # (N, C)
    y_mean = fit_y.mean()
    w = torch.linalg.solve(z.T @ z + ridge * torch.eye(z.size(1), dtype=torch.float64), z.T @ (fit_y - y_mean))
    return ((test_x - mean) / std) @ w + y_mean


def figures(predicted: torch.Tensor, position: torch.Tensor, chance: torch.Tensor, block_size: int) -> dict:
    """The test figures of one site: predicted and true positions (M,), chance (M,) the fit part's mean position."""
    error = (predicted.clamp(0, block_size - 1) - position).abs()
    by_range = {f"{lo}-{hi}": float(error[(position >= lo) & (position <= hi)].mean())
                for lo, hi in RANGES if hi < block_size}
    return {"mae": float(error.mean()), "by_range": by_range, "within": float((error <= WITHIN).double().mean()),
            "chance": float((chance - position).abs().mean())}


def probe_sites(vectors: list[torch.Tensor], block_size: int) -> list[dict]:
    """Each site's test figures from its (W, T, C) vectors: mae, by_range, within (share within ±WITHIN), chance."""
    W, T = vectors[0].shape[:2]
    test = is_test(W)
    position = torch.arange(T, dtype=torch.float64).expand(W, T)  # (W, T): what the probe predicts
    fit_y, test_y = position[~test].reshape(-1), position[test].reshape(-1)
    chance = fit_y.mean().expand(len(test_y))
    out = []
    for v in vectors:
        predicted = ridge_predict(v[~test].reshape(-1, v.size(-1)), fit_y, v[test].reshape(-1, v.size(-1)))
        out.append(figures(predicted, test_y, chance, block_size))
    return out


def position_probe(model: GPT, ids: torch.Tensor, offsets: torch.Tensor, causal: bool = True) -> dict:
    """{"windows", "test_windows", "sites": [{"site", "layer", "mae", "by_range", "within", "chance"}]} for the
    windows of block_size characters of `ids` starting at `offsets`, the model run with or without the mask."""
    T = model.config.block_size
    x, _ = windows(ids, offsets, T)  # (W, T)
    sites = probe_sites(site_vectors(model, x, causal), T)
    return {"windows": len(offsets), "test_windows": int(is_test(len(offsets)).sum()),
            "sites": [{**name, **f} for name, f in zip(site_names(model.config.n_layer), sites)]}
