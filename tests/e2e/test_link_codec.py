"""Issue 39, item 9, in a real browser: the page opens with what the server's codec decided for each value of its
link (app/services/link_codec.py), says so in the notice, and writes that value back into its address; full-width
digits are digits on the page as on the server."""

from urllib.parse import parse_qs, urlsplit

import pytest

pytestmark = pytest.mark.e2e


def query(page) -> dict:
    return {k: v[0] for k, v in parse_qs(urlsplit(page.url).query).items()}


def notice_texts(page) -> list[str]:
    return [t.strip() for t in page.locator("[data-notice]").all_text_contents()]


# The link, what the page's address says afterwards, and a control that shows the value used.
EXPLORER = [
    ("layer=5", {"layer": "1"}, ("#layer", "1")),
    ("layer=abc", {"layer": "1"}, ("#layer", "1")),
    ("causal=maybe", {}, None),
    ("posinfo=2", {}, None),
    ("align=yes", {}, None),
    ("rel_first=明明", {}, ("#rel-first", "明")),
    ("rel_first=%E2%80%AE", {}, ("#rel-first", "明")),
    ("rel_layer=7", {}, None),
    ("rel_head=9", {}, None),
    ("step=12345", {}, None),
    ("off=9-9", {}, None),
    ("off=garbage", {}, None),
    ("seed=-1", {}, None),
    ("pos=rope&pos=alibi", {"pos": "learned"}, None),
    ("layer=２", {"layer": "2"}, ("#layer", "2")),
]


@pytest.mark.parametrize("link, address, control", EXPLORER)
def test_the_explorer_opens_with_what_its_notice_says(open_page, tools, link, address, control):
    page = open_page(f"/?{link}&lang=fr")
    tools.wait_idle(page)
    shown = notice_texts(page)
    assert len(shown) == (0 if "２" in link else 1), shown
    if shown:
        name = link.split("=")[0]
        assert name in shown[0] and "lien" in shown[0]  # in the page's language, naming the parameter
    q = query(page)
    for key, value in address.items():
        assert q[key] == value, q
    # What the notice says was used is what the page holds: no refused value comes back into the address.
    for key in ("causal", "posinfo", "align", "rel_first", "rel_layer", "rel_head", "step", "off", "seed"):
        assert key not in q, q
    if control:
        assert page.input_value(control[0]) == control[1]
    assert page.evaluate("[...document.querySelector('#rel-first').value].every(c => c.charCodeAt(0) >= 0x20 "
                         "&& c !== '\\u202e')")


@pytest.mark.parametrize("link, step, notices", [("step=３", 3, 0), ("step=3", 3, 0), ("present=maybe", 1, 1),
                                                 ("step=３&step=4", 1, 1)])
def test_the_lesson_opens_the_step_the_server_decided(open_page, tools, link, step, notices):
    page = open_page(f"/lesson?{link}&lang=en")
    tools.wait_until(page, "() => document.querySelector('[data-step]') !== null")
    assert int(page.get_attribute("[data-step]", "data-step")) == step
    assert page.input_value("#step-select") == str(step)
    assert query(page)["step"] == str(step) and "present" not in query(page)
    assert len(notice_texts(page)) == notices
