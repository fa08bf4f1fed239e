"""Class mode runs the steps on where order is kept (issue 40) as it runs the others: the teacher's projector (fr,
1280x720) starts on the probe step, a phone (zh, 390x844) votes, the reveal reaches it with the server's outcome;
the teacher moves to the bands step, the phone follows, votes wrong, and the reveal grades it wrong."""

import json
import urllib.request

import pytest
from class_pages import class_app, join_phone, start_class, visible, wait_panel, wait_step

from app.domain.lesson_steps import STEPS

pytestmark = pytest.mark.e2e

NUMBER = {s["id"]: n for n, s in enumerate(STEPS, start=1)}


@pytest.fixture(scope="module")
def server_url():
    """This module's own app (class_pages.class_app): open_page opens its pages here."""
    with class_app() as url:
        yield url


def own_verdict(server_url: str, step: str) -> dict:
    request = urllib.request.Request(f"{server_url}/api/lesson/{step}/verdict", data=b"{}",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def vote_and_reveal(teacher, student, tools, choice: str) -> None:
    student.check(f"[data-question] input[value='{choice}']")
    student.click("[data-commit]")
    wait_panel(student, tools, "mine", choice)
    assert not visible(student, "#step-reveal"), "committing in class waits for the teacher's reveal"
    wait_panel(teacher, tools, "answered", "1")
    teacher.click("#class-reveal")
    wait_panel(student, tools, "revealed", "true")
    tools.wait_until(student, "() => !document.querySelector('#step-reveal').hidden "
                              "&& document.querySelector('#verdict').dataset.prediction !== undefined",
                     message="the reveal did not reach the student")


def test_a_class_votes_on_the_probe_and_bands_steps(open_page, server_url, tools):
    teacher, code, join = start_class(open_page, tools, NUMBER["probe"], width=1280, height=720, lang="fr")
    student = join_phone(open_page, tools, join, width=390, height=844, locale="zh-CN")
    wait_step(student, tools, NUMBER["probe"])
    probe = own_verdict(server_url, "probe")
    vote_and_reveal(teacher, student, tools, probe["accepted"][0])
    assert student.get_attribute("#verdict", "data-outcome") == probe["outcome"]
    assert student.get_attribute("#verdict", "data-prediction") == "right"
    assert teacher.get_attribute("#verdict", "data-outcome") == probe["outcome"]

    teacher.click("#next-step")
    wait_step(teacher, tools, NUMBER["bands"])
    wait_step(student, tools, NUMBER["bands"])
    assert not visible(student, "#step-reveal"), "a step opens with its answer hidden"
    bands = own_verdict(server_url, "bands")
    wrong = next(c for c in STEPS[NUMBER["bands"] - 1]["choices"] if c not in bands["accepted"])
    vote_and_reveal(teacher, student, tools, wrong)
    assert student.get_attribute("#verdict", "data-outcome") == bands["outcome"]
    assert student.get_attribute("#verdict", "data-prediction") == "wrong"
    assert student.evaluate("() => document.documentElement.scrollWidth") <= 390
