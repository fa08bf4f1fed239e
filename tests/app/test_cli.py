import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main

CLI = Path(sys.executable).with_name("heads-positions")  # the command as pip installed it, beside this Python


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


@pytest.mark.slow  # starts the command in a subprocess
def test_serve_does_not_load_torch_in_the_supervisor():
    # What serve runs before its workers start: the parser, and the check of the settings.
    code = ("import sys; from app.cli import build_parser; build_parser('serve'); "
            "from app.settings import startup_problems; startup_problems(); print('torch' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"


@pytest.mark.slow  # a process of its own, which imports torch
def test_lesson_into_a_closed_pipe_ends_quietly_and_leaves_sigpipe_alone():
    # The reader is gone before the lesson prints (as `| head -1` once it has its line): exit 0, no traceback.
    proc = subprocess.Popen([CLI, "lesson"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err.decode()) == (0, "")
    # In this process too, running a command leaves the signal setting as Python set it: a server
    # started from the same CLI must get EPIPE from a closed socket, never SIGPIPE.
    assert main(["lesson", "--json"]) == 0
    assert signal.getsignal(signal.SIGPIPE) == signal.SIG_IGN


def serve(env: dict, *args: str) -> subprocess.CompletedProcess:
    """`heads-positions serve` as a user starts it, with these environment variables; for runs that end.
    A run that does not end in time is killed with its workers: a worker left behind would keep its port."""
    proc = subprocess.Popen([CLI, "serve", *args], env={**os.environ, **env}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.slow  # its worker starts
def test_serve_stops_with_code_3_when_the_app_cannot_start(tmp_path):
    # The supervisor restarts workers that die, but not one that never started: that would loop forever.
    # A vocab.json that is there (so the settings pass) but is no vocabulary fails in the worker.
    (tmp_path / "vocab.json").write_text("not json")
    done = serve({"HP_WEIGHTS_DIR": str(tmp_path)}, "--port", "0")
    assert done.returncode == 3
    assert "vocab.json" in done.stderr and "failed to start" in done.stderr


INSIDE_A_FILE = f"{sys.executable}/classes"  # a folder no one can make, root included


@pytest.mark.parametrize("env, named, rule", [
    ({"HP_MAX_CLASSES": "0"}, "HP_MAX_CLASSES='0'", "greater than or equal to 1"),
    ({"HP_CLASS_POLL_MS": "often"}, "HP_CLASS_POLL_MS='often'", "valid integer"),
    ({"HP_WEIGHTS_DIR": "/nonexistent/weights"}, "HP_WEIGHTS_DIR='/nonexistent/weights'", "no vocab.json there"),
    ({"HP_DATA_DIR": INSIDE_A_FILE}, f"HP_DATA_DIR='{INSIDE_A_FILE}'", "cannot make this folder"),
], ids=["bound", "type", "weights", "data-folder"])
@pytest.mark.slow  # each starts the command in a subprocess
def test_serve_names_a_bad_setting_and_its_rule_before_any_worker_starts(env, named, rule):
    # A bad setting used to fail in every worker: HP_MAX_CLASSES=0 was a traceback and a restart, forever.
    done = serve(env, "--port", "0")
    assert done.returncode == 2, done.stderr
    assert named in done.stderr and rule in done.stderr
    assert "Traceback" not in done.stderr and "Started server process" not in done.stderr


@pytest.mark.parametrize("env, args, named", [
    ({"PORT": "eighty"}, [], "--port"),
    ({}, ["--port", "99999"], "--port"),
    ({"WORKERS": "0"}, ["--port", "0"], "--workers"),
], ids=["port-env", "port-range", "workers-env"])
def test_serve_refuses_a_bad_port_or_worker_count(env, args, named):
    done = serve(env, *args)
    assert done.returncode == 2
    assert f"argument {named}: must be a whole number" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("args, says", [
    (["--steps", "50"], "steps (50) must be >= 1 and greater than warmup (100)"),
    (["--n-head", "3"], "n_embd (128) must be divisible by n_head (3)"),
    pytest.param(["--resume"], "nothing to resume", marks=pytest.mark.slow),  # reads the corpus first
    (["--device", "gpu"], "device must be auto, cpu, cuda or cuda:N, got 'gpu'"),
    (["--device", "meta"], "device must be auto, cpu, cuda or cuda:N, got 'meta'"),
    (["--weight-decay", "-0.1"], "weight_decay (-0.1) must be >= 0"),
    (["--batch-size", "0"], "batch_size must be >= 1, got 0"),
    (["--eval-every", "0"], "eval_every must be >= 1, got 0"),
    (["--grad-clip", "-1"], "grad_clip must be > 0, got -1.0"),
], ids=["steps", "heads", "resume", "device", "device-kind", "decay", "batch", "eval-every", "clip"])
def test_train_names_the_rule_a_bad_option_breaks(capsys, tmp_path, args, says):
    # The lesson's exercises have students train; a bad option is a line on stderr, not a traceback.
    code, out, err = run(capsys, "train", "--position", "learned", "--out", str(tmp_path / "x.pt"), *args)
    assert code == 2 and says in err and not out


def test_train_refuses_an_out_folder_that_does_not_exist_before_it_trains(capsys, tmp_path):
    # A run of two steps, so that a command that checked only at the end would fail here in seconds.
    code, _, err = run(capsys, "train", "--position", "learned", "--out", str(tmp_path / "missing" / "x.pt"),
                       "--steps", "2", "--warmup", "1", "--eval-every", "1", "--eval-batches", "1")
    assert code == 2 and f"the folder {tmp_path / 'missing'} does not exist" in err


@pytest.mark.slow  # reads the corpus first
def test_train_names_a_state_file_it_cannot_resume_from(capsys, tmp_path):
    (tmp_path / "x.pt.state").write_bytes(b"not a checkpoint")
    code, _, err = run(capsys, "train", "--position", "learned", "--out", str(tmp_path / "x.pt"), "--resume")
    assert code == 2 and "x.pt.state cannot be read" in err and "delete it to start over" in err


def test_train_says_how_to_rebuild_a_changed_corpus_file(capsys, tmp_path, monkeypatch):
    import model.poems

    monkeypatch.setattr(model.poems, "sha256", lambda text: "a changed file")
    code, _, err = run(capsys, "train", "--position", "learned", "--out", str(tmp_path / "x.pt"))
    assert code == 2 and "does not match the sha256 in corpus.json; rebuild it with" in err


@pytest.mark.slow  # starts a training run
def test_train_keeps_the_traceback_of_an_error_that_is_not_an_option(capsys, tmp_path, monkeypatch):
    """A ValueError from inside the run is a bug, not a bad option: it must not pass for one."""
    import model.train

    def broken(*args, **kwargs):
        raise ValueError("a bug in the batches")

    monkeypatch.setattr(model.train, "windows", broken)
    with pytest.raises(ValueError, match="a bug in the batches"):
        run(capsys, "train", "--position", "learned", "--out", str(tmp_path / "x.pt"),
            "--steps", "2", "--warmup", "1", "--eval-every", "1", "--eval-batches", "1")


def test_corpus_names_a_tarball_it_cannot_read(capsys, tmp_path):
    not_a_tarball = tmp_path / "poems.tgz"
    not_a_tarball.write_text("not a tarball")
    for tarball in (not_a_tarball, tmp_path / "missing.tgz"):
        code, _, err = run(capsys, "corpus", "--tarball", str(tarball), "--out", str(tmp_path / "out"),
                           "--vocab", str(tmp_path / "vocab.json"))
        assert code == 2 and f"--tarball {tarball}: not a readable tarball" in err
