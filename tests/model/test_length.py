import torch
import torch.nn.functional as F

from model import GPT, GPTConfig
from model.length import eval_length, loss_by_position


def test_loss_by_position_is_the_mean_cross_entropy_at_each_position():
    model = GPT(GPTConfig(vocab_size=12, n_layer=1, n_embd=16, n_head=2, block_size=8, position="rope"), seed=0)
    ids = torch.randint(0, 12, (300,), generator=torch.Generator().manual_seed(0))
    got = loss_by_position(model, ids, length=16, n_windows=5)
    assert len(got) == 16
    # Independently: the 5 windows start evenly spread; average each position's loss by hand.
    starts = range(0, 5 * ((300 - 16) // 5), (300 - 16) // 5)
    per_position = torch.zeros(16, dtype=torch.float64)
    for s in starts:
        logits, _ = model(ids[s : s + 16][None])
        per_position += F.cross_entropy(logits[0], ids[s + 1 : s + 17], reduction="none").double()
    torch.testing.assert_close(torch.tensor(got, dtype=torch.float64), per_position / 5, rtol=1e-5, atol=1e-6)


def test_learned_stops_at_its_table_and_the_others_run_twice_as_long():
    ids = torch.randint(0, 12, (400,), generator=torch.Generator().manual_seed(1))
    for position, length in (("learned", 8), ("rope", 16), ("none", 16)):
        model = GPT(GPTConfig(vocab_size=12, n_layer=1, n_embd=16, n_head=2, block_size=8, position=position))
        assert eval_length(model, ids, n_windows=3)["length"] == length
