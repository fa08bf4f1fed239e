import json

import pytest

from app.cli import main


def run(capsys, *args):
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_lesson_json_has_the_table_and_the_head_split(capsys):
    code, out, _ = run(capsys, "lesson", "--json")
    report = json.loads(out)
    assert code == 0
    assert [row["n_layer"] for row in report["order"]] == [1, 2, 3]
    assert report["order"][0]["without_position"]["max_abs"] < 1e-5
    assert report["order"][1]["without_position"]["max_abs"] > 1e-4
    assert report["heads"]["shapes"] == {"q": [1, 5, 32], "heads": [1, 4, 5, 8], "scores": [1, 4, 5, 5]}
    assert report["heads"]["params"][2] == {"n_head": 4, "qkv": 3168, "proj": 1056}


@pytest.mark.parametrize("lang, words", [("zh", "层"), ("ja", "層"), ("fr", "couche"), ("en", "layer")])
def test_lesson_speaks_four_languages(capsys, lang, words):
    code, out, _ = run(capsys, "lesson", "--lang", lang, "--position", "rope")
    assert code == 0 and words in out and "3168" in out


def test_lesson_names_unknown_characters_and_refuses_empty_lines(capsys):
    code, out, _ = run(capsys, "lesson", "--lang", "en", "--lines", "ab白", "白日")
    assert code == 0 and "unknown: a b" in out
    code, _, err = run(capsys, "lesson", "--lines", "", "白")
    assert code == 2 and "--lines" in err and "empty" in err


def test_serve_does_not_load_torch_in_the_supervisor():
    import subprocess
    import sys

    code = "import sys; from app.cli import build_parser; build_parser('serve'); print('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"


def test_lesson_into_a_closed_pipe_ends_quietly_and_leaves_sigpipe_alone():
    import signal
    import subprocess
    import sys
    from pathlib import Path

    # The reader is gone before the lesson prints (as `| head -1` once it has its line): exit 0, no traceback.
    cli = Path(sys.executable).with_name("heads-positions")
    proc = subprocess.Popen([cli, "lesson"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err.decode()) == (0, "")
    # In this process too, running a command leaves the signal setting as Python set it: a server
    # started from the same CLI must get EPIPE from a closed socket, never SIGPIPE.
    assert main(["lesson", "--json"]) == 0
    assert signal.getsignal(signal.SIGPIPE) == signal.SIG_IGN


def test_serve_stops_with_code_3_when_the_app_cannot_start(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    # The supervisor restarts workers that die, but not one that never started: that would loop forever.
    cli = Path(sys.executable).with_name("heads-positions")
    env = {**os.environ, "HP_WEIGHTS_DIR": str(tmp_path / "missing")}
    done = subprocess.run([cli, "serve", "--port", "0"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 3
    assert "vocab.json" in done.stderr and "failed to start" in done.stderr
