"""The mode "none" inside a sentence is named as a phrase ("no positions", 位置の情報なし, sans position), never by its
bare name, which read as a word of the sentence: 「学習済みモデル（なし、因果マスクあり）」, "ce modèle (position :
aucune)", "なし 4.995" (issue 39). The choices and the order of exercise 3 (pos_emb < RoPE < none) keep the names."""

import re

import pytest

from app.domain.lesson_steps import STEPS

pytestmark = pytest.mark.e2e

NUMBER = {s["id"]: n for n, s in enumerate(STEPS, start=1)}
# The bare name as a word of its own: not part of a longer word (位置の情報なし, マスクなし, ne… aucune tête).
BARE = {"ja": r"(?<![\u3040-\u30ff\u4e00-\u9fff])なし(?![\u3040-\u30ff\u4e00-\u9fff])",
        "zh": r"(?<![\u4e00-\u9fff])无(?![\u4e00-\u9fff])",
        "fr": r"\(aucune\)|: aucune|\baucune[,)]", "en": r"\bnone\b"}


def verdict_under_none(open_page, tools, step: str, lang: str) -> str:
    page = open_page(f"/lesson?step={NUMBER[step]}&lang={lang}", explorer=False, locale="en-US",
                     width=1280, height=720)
    tools.wait_rendered(page, 0)
    page.locator("[data-question] input[type=radio]").first.check()
    count = tools.redraw_after(page, lambda: page.click("[data-commit]"))
    if STEPS[NUMBER[step] - 1]["setup"] and not page.is_checked("input[name=position][value=none]"):
        page.click("input[name=position][value=none]")
        tools.wait_rendered(page, count)
    return page.inner_text("#verdict")


@pytest.mark.parametrize("lang", ["ja", "fr", "zh", "en"])
@pytest.mark.parametrize("step", ["limit", "rotate", "probe"])
def test_a_sentence_names_the_mode_none_as_a_phrase(open_page, tools, step, lang):
    phrase = tools.texts(lang)["pos_none_phrase"]
    verdict = verdict_under_none(open_page, tools, step, lang)
    assert phrase in verdict, verdict
    assert not re.search(BARE[lang], verdict), verdict


@pytest.mark.parametrize("lang", ["ja", "fr"])
def test_exercise_3_lists_the_losses_with_the_phrase_and_orders_the_names(open_page, tools, lang):
    texts = tools.texts(lang)
    verdict = verdict_under_none(open_page, tools, "ex3", lang)
    number = r"\d+[.,]\d{3}"
    assert re.search(re.escape(texts["pos_none_phrase"]) + r"\s" + number, verdict), verdict
    bare = r"(?<![\w\u3040-\u30ff\u4e00-\u9fff])" + re.escape(texts["pos_none"])
    assert not re.search(bare + r"\s" + number, verdict), verdict
    # The order keeps the names, as the choices it quotes do.
    assert f"< {texts['pos_none']}" in verdict or f"{texts['pos_none']} <" in verdict, verdict
