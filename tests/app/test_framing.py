"""Issue 39, item 6: a step's title, framing and question set the experiment up without saying what it will show.
Each row is a phrase a native reader found giving the answer away, in the text where it stood, in each language.
And a chart's description that read as two broken sentences (item 14)."""

import json
import re
from pathlib import Path

import pytest

LESSON = Path(__file__).resolve().parents[2] / "static" / "i18n" / "lesson"

GIVEAWAYS = {
    # step 1 answers "same": a title saying the model is blind to order states it
    "order_title": {"en": ["blind"], "fr": ["aveugle"], "zh": ["分不清"], "ja": ["見えない"]},
    # step 2 answers "different": a surprise says it will not be step 1's answer again
    "leak_title": {"en": ["surprise"], "fr": ["surprise"], "zh": ["意料"], "ja": ["意外"]},
    # step 3: every position seeing the whole line is the reason the gap vanishes
    "nomask_framing": {"en": ["whole line"], "fr": ["tout le vers"], "zh": ["整句"], "ja": ["句全体"]},
    # step 4: the last characters differing is why the outputs differ
    "pair_framing": {"en": ["end on different"], "fr": ["terminent"], "zh": ["最后一个字"], "ja": ["最後の文字"]},
    # step 5: "now" tells that it could not before and can with the table
    "posemb_question": {"en": ["now"], "fr": ["maintenant"], "zh": ["现在"], "ja": ["でも"]},
    # step 9: only the distance counting is RoPE's answer
    "relative_title": {"en": ["distance"], "fr": ["distance"], "zh": ["相对"], "ja": ["距離"]},
    # step 10: "another question" hints that RoPE does not predict well past the training length
    "length_framing": {"en": ["another question", "another matter"], "fr": ["autre question"], "zh": ["另一回事"],
                       "ja": ["別の話"]},
}


@pytest.mark.parametrize("lang", ("en", "fr", "zh", "ja"))
def test_no_title_framing_or_question_gives_its_answer_away(lang):
    texts = json.loads((LESSON / f"{lang}.json").read_text(encoding="utf-8"))
    found = [(key, phrase) for key, phrases in GIVEAWAYS.items() for phrase in phrases[lang]
             if phrase in texts[key].lower()]
    assert not found, found


@pytest.mark.parametrize("lang", ("en", "fr", "zh", "ja"))
def test_a_bar_charts_description_reads_as_one_sentence(lang):
    """Its items start with a label in lower case (« ce montage : … »): after the chart's name comes a colon, not a
    full stop (it read « Diagramme en barres. ce montage »)."""
    texts = json.loads((LESSON / f"{lang}.json").read_text(encoding="utf-8"))
    alt = texts["chart_bars_alt"].format(items=texts["bar_this"])
    assert not re.search(r"[.。] *" + re.escape(texts["bar_this"]), alt), alt
