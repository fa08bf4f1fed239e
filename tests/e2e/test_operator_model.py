"""An operator's model in the explorer (issue 41): a nanoGPT-format model of 6 layers x 6 heads served with
`heads-positions serve --model`, chosen in the weights menu, laid out at 1280x720 and 390x844 without overflow,
starting from two lines it knows, and marking a character outside its vocabulary."""

import pickle
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import torch

from model.gpt import GPT, GPTConfig

pytestmark = pytest.mark.e2e

CHARS = "\n !$&',-.3:;?ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"  # shakespeare_char's 65
NANO_NAMES = (("tok_emb.", "transformer.wte."), ("pos_emb.", "transformer.wpe."), ("ln_f.", "transformer.ln_f."),
              ("blocks.", "transformer.h."), (".attn.qkv.", ".attn.c_attn."), (".attn.proj.", ".attn.c_proj."),
              (".mlp.fc.", ".mlp.c_fc."), (".mlp.proj.", ".mlp.c_proj."))


def six_by_six(folder: Path) -> Path:
    """An untrained 6 x 6 model (width 48) in nanoGPT's files: ckpt.pt, and meta.pkl beside it."""
    model = GPT(GPTConfig(vocab_size=len(CHARS), block_size=64, n_layer=6, n_head=6, n_embd=48, bias=False), seed=1)
    state = {}
    for name, tensor in model.state_dict().items():
        for ours, theirs in NANO_NAMES:
            name = name.replace(ours, theirs, 1)
        state[name] = tensor
    torch.save({"model": state, "model_args": {"n_layer": 6, "n_head": 6, "n_embd": 48, "block_size": 64,
                                               "bias": False, "vocab_size": len(CHARS), "dropout": 0.0},
                "best_val_loss": torch.tensor(1.47), "config": {"dataset": "shakespeare_char"}}, folder / "ckpt.pt")
    (folder / "meta.pkl").write_bytes(pickle.dumps({"vocab_size": len(CHARS), "itos": dict(enumerate(CHARS)),
                                                    "stoi": {c: i for i, c in enumerate(CHARS)}}))
    return folder / "ckpt.pt"


def e2e_conftest(config):
    """tests/e2e/conftest.py as pytest loaded it ("conftest" on sys.path is tests/app's): its PageOpener and port."""
    return next(p for p in config.pluginmanager.get_plugins()
                if str(getattr(p, "__file__", "")).endswith(str(Path("e2e") / "conftest.py")))


@pytest.fixture(scope="module")
def model_server(request, tmp_path_factory):
    """The app served the README's way with the model: `heads-positions serve --model six=ckpt.pt`."""
    folder = tmp_path_factory.mktemp("six")
    port = e2e_conftest(request.config)._free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [str(Path(sys.executable).with_name("heads-positions")), "serve", "--port", str(port), "--workers", "1",
           "--model", f"six={six_by_six(folder)}"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=2):
                    break
            except OSError:
                time.sleep(0.2)
        assert proc.poll() is None, f"serve exited with {proc.returncode}"
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.fixture
def open_model_page(request, browser, model_server, page_pool):
    opener = e2e_conftest(request.config).PageOpener(browser, model_server, page_pool)
    yield opener
    found = opener.close()
    assert not found, "the page reported problems:\n" + "\n".join(found)


@pytest.mark.parametrize("size", [{"width": 1280, "height": 720}, {"width": 390, "height": 844}])
def test_a_6_by_6_model_lays_out_without_overflow_and_starts_from_lines_it_knows(open_model_page, tools, size):
    page = open_model_page("/?weights=model:six&lang=en", locale="en-US", **size)
    tools.wait_idle(page)
    # The lesson's Chinese lines are not in its vocabulary: the page starts from two English lines, and says so.
    assert page.input_value("#line-a") == "the dog bit the man"
    assert "starts from two lines it does know" in page.text_content("#weights-note")
    assert page.evaluate("document.querySelectorAll('.heatmap[data-line=\"a\"]').length") == 6  # six heads
    assert "6 layers × 6 heads" in page.text_content("#weights-note")
    assert page.evaluate("document.scrollingElement.scrollWidth") <= size["width"]
    overflowing = page.evaluate("""() => [...document.querySelectorAll('.panel')]
        .filter((p) => p.scrollWidth > p.clientWidth + 1 && getComputedStyle(p).overflowX === 'visible')
        .map((p) => p.id)""")
    assert overflowing == []
    # The shipped results say they are the shipped models'.
    assert "not on six" in page.text_content("#panel-training [data-shipped-note]")
    tools.screenshot(page, f"operator-model-{size['width']}")


def test_a_character_outside_the_models_vocabulary_is_marked(open_model_page, tools):
    page = open_model_page("/?weights=model:six&lang=en", locale="en-US")
    tools.wait_idle(page)
    before = tools.render_count(page)
    page.fill("#line-b", "the man bit the 明")
    tools.wait_rendered(page, before)
    assert page.is_visible("#line-b-unknown") and "明" in page.text_content("#line-b-unknown")
    assert not page.is_visible("#line-a-unknown")
