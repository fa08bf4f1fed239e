"""A head's role (model/heads.py describe: kinds and shares, no words) worded by the page in each language
(static/js/explorer/head-role.js with static/i18n): hand-made heads, each rule of describe once."""

import pytest

from model.heads import MAX_OFFSET, describe

pytestmark = pytest.mark.e2e

PU, EU = 0.16, 4.16  # punctuation and entropy of an even row, about what the shipped models measure


def head(by_offset=(), **kw):
    """A head's numbers: 2% on every offset, 3% on the latest mark, a fifth on punctuation, unless given."""
    offsets = list(by_offset) + [0.02] * (MAX_OFFSET + 1 - len(by_offset))
    return {"by_offset": offsets, "first": 0.02, "entropy": 2.0, "punctuation": 0.2, "last_mark": 0.03,
            "line_above": 0.02, **kw}


CASES = [
    (head([0.05, 0.51]), {"en": "mostly the previous character (51%)", "zh": "主要看前一个字（51%）"}),
    (head([0.30, 0.49]), {
        "zh": "看得最多的是前一个字（49%），其次是这个字自己（30%）",
        "ja": "割合の大きい順に直前の文字（49%）、その文字自身（30%）を見る",
        "fr": "regarde d'abord le caractère précédent (49\u202f%), puis le caractère lui-même (30\u202f%)",
        "en": "the largest shares on the previous character (49%) and the character itself (30%)"}),
    (head([0.24, 0.32], last_mark=0.2), {
        "en": "the largest shares on the previous character (32%), the character itself (24%) "
              "and the latest punctuation mark (20%)",
        "fr": "regarde d'abord le caractère précédent (32\u202f%), puis le caractère lui-même "
              "(24\u202f%) et le dernier signe de ponctuation (20\u202f%)"}),
    (head([0.12, 0.6]), {"en": "mostly the previous character (60%), then the character itself (12%)"}),
    (head([0.05, 0.3, 0.02, 0.02, 0.02, 0.2], line_above=0.38), {
        "en": "the largest shares on the same place one line up (38%) and the previous character (30%)"}),
    (head([0.05, 0.09, 0.02, 0.02, 0.02, 0.6]), {"en": "mostly the character 5 back (60%)",
                                                 "ja": "主に5 文字前（60%）を見る"}),
    (head(punctuation=0.87, last_mark=0.22), {
        "zh": "主要看标点（87%，其中最近的一个标点占 22%）",
        "ja": "主に句読点（87%、うち直近の句読点に 22%）を見る",
        "fr": "regarde surtout la ponctuation (87\u202f%, dont 22\u202f% sur le dernier signe)",
        "en": "mostly punctuation (87%, of which 22% on the latest mark)"}),
    (head(punctuation=0.87, last_mark=0.05), {"en": "mostly punctuation (87%)"}),
    (head(entropy=EU - 0.29), {
        "en": "spread over everything before it (entropy 3.9 nats, against 4.2 for an even spread)",
        "fr": "se répartit sur tout ce qui précède (entropie 3,9 nats, contre 4,2 pour une répartition égale)"}),
    (head(entropy=EU - 0.31), {
        "en": "no place stands out (entropy 3.9 nats, against 4.2 for an even spread); "
              "the largest shares on the latest punctuation mark (3%) and the character itself (2%)"}),
]

WORD = """async (roles) => {
    const { headRoleText } = await import("/static/js/explorer/head-role.js");
    return roles.map(headRoleText);
}"""


def test_the_page_words_each_role_in_its_language(open_page, tools):
    page = open_page("/?lang=en")
    roles = [describe(stats, PU, EU) for stats, _ in CASES]
    for lang in ("en", "zh", "ja", "fr"):
        if lang != "en":
            page.select_option("#lang", lang)
            tools.wait_until(page, "(lang) => document.documentElement.lang === lang", lang)
        worded = page.evaluate(WORD, roles)
        for (_, want), got in zip(CASES, worded):
            if lang in want:
                assert got == want[lang], lang
