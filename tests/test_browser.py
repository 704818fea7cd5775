"""The browser game end to end: a real headless Chromium (Debian's) driven by Playwright
against the bot service on loopback. Start a game, bid, play a hand to the end, see the score.

Skipped where Chromium or Playwright is missing, except under CI (``CI=true``), where
``.ci/run`` installs both and a missing browser is a failure.
"""

import os
import shutil

import pytest
from helpers import running_server

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
IN_CI = os.environ.get("CI") == "true"

try:
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover - depends on the machine
    sync_playwright = None

if not IN_CI and (CHROMIUM is None or sync_playwright is None):
    pytest.skip("needs Debian's chromium and the playwright package (.ci/run installs both)", allow_module_level=True)

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def server(onnx_model):
    from cuatrola_serve.serve import create_app

    with running_server(create_app(onnx_model)) as port:
        yield f"http://127.0.0.1:{port}"


#: what the page says in each language: (hand over, score, the new-game button, the pass button)
SAYS = {"en-US": ("Hand over", "Score: you ", "New game", "pass"),
        "es-ES": ("Fin de la mano", "Marcador: nosotros ", "Nueva partida", "paso")}


@pytest.mark.parametrize("locale", sorted(SAYS))
def test_play_a_hand_in_the_browser(server, locale):
    """The page speaks the browser's language (English or Spanish), every string of it."""
    assert CHROMIUM is not None and sync_playwright is not None, "CI must install chromium and playwright"
    hand_over, score_prefix, new_game, pass_name = SAYS[locale]
    views, passes = [], []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(locale=locale)
        page.on("response", lambda r: views.append(r.json()) if "/v1/games" in r.url and r.ok else None)
        page.goto(server + "/")
        page.select_option("#level", "expert")
        page.select_option("#target", "5")
        assert page.text_content("#new-game") == new_game
        page.click("#new-game")
        page.wait_for_selector("#seat-bottom .card")
        bids = clicks = 0
        while page.locator("#log .hand-over").count() == 0 and clicks < 30:
            logged = page.locator("#log div").count()
            if page.locator(".bid-button").count():  # bid solo when it is offered, else pass
                passes.append(page.text_content(".bid-button[data-action='20']"))
                solo = page.locator(".bid-button[data-action='21']")
                (solo if solo.count() else page.locator(".bid-button[data-action='20']")).first.click()
                bids += 1
            else:
                page.locator("#seat-bottom .card.legal").first.click()
            clicks += 1
            page.wait_for_function("n => document.querySelectorAll('#log div').length > n", arg=logged, timeout=10_000)
        score = page.text_content("#score")
        over = page.text_content("#log .hand-over")
        page.screenshot(path=os.environ.get("CUATROLA_SCREENSHOT", f"/tmp/cuatrola_browser_{locale}.png"))
        browser.close()
    assert bids == 1, "the human seat bids exactly once per hand"
    assert passes == [pass_name]
    assert over.startswith(hand_over), over
    assert score.startswith(score_prefix), score
    # the page never received another seat's unplayed card
    for v in views:
        assert len(v["hand"]) == v["cards_left"][v["seat"]]
        assert "hands" not in v and "record" not in v


def test_the_language_toggle_redraws_the_page_and_is_remembered(server):
    """A Spanish browser switched to English: the header, the status, the log and the levels' names
    change at once, and the choice survives a reload."""
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(locale="es-ES")
        page.goto(server + "/")
        assert page.get_attribute("html", "lang") == "es"
        assert page.text_content("#level option[value='master']") == "maestro"
        assert page.text_content("#rules option[value='traditional']") == "tradicional"
        page.click("#new-game")
        page.wait_for_selector("#seat-bottom .card")
        assert page.text_content("#score").startswith("Marcador: nosotros ")
        page.select_option("#lang", "en")
        assert page.text_content("#new-game") == "New game"
        assert page.text_content("#score").startswith("Score: you ")
        assert page.text_content("#level option[value='master']") == "master"
        assert page.get_attribute("html", "lang") == "en"
        page.reload()
        assert page.text_content("#new-game") == "New game"
        browser.close()
