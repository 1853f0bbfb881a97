"""Take a screenshot of a page ta.viz wrote, in headless Chromium (Playwright), after a few clicks.

    python docs/screenshot_pages.py PAGE.html OUT.png [ACTION ...]
    ACTION: click=#walk-next   select=#head-select:1   node=12 (click walk node 12)

The README's pictures in docs/pages/ were taken with it from the demos' pages:
    python docs/screenshot_pages.py demo_out/see_backprop/walk.html docs/pages/see_backprop_walk.png \
        click=#walk-next click=#walk-next click=#walk-next
    python docs/screenshot_pages.py translate_out/walk.html docs/pages/translate_walk.png click=#walk-next ...
    python docs/screenshot_pages.py translate_out/attention.html docs/pages/translate_attention.png \
        select=#head-select:9 click=#mode-switch
    python docs/screenshot_pages.py gpt_out/heads.html docs/pages/gpt_heads.png select=#layer-select:1
    python docs/screenshot_pages.py induction_out/heads.html docs/pages/induction_heads.png \
        select=#checkpoint-select:15 select=#layer-select:1
"""
import os
import shutil
import sys

from playwright.sync_api import sync_playwright

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]


def main(page_path, out, *actions):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("no chromium on PATH: `sudo apt-get install -y chromium` (Debian/Ubuntu)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto("file://" + os.path.abspath(page_path))
        for action in actions:
            kind, _, what = action.partition("=")
            if kind == "click":
                page.click(what)
            elif kind == "select":
                selector, value = what.rsplit(":", 1)
                page.select_option(selector, value)
            elif kind == "node":
                page.locator(f'svg#graph [data-node="{what}"]').dispatch_event("click")
            else:
                raise SystemExit(f"unknown action {action!r}: use click=SELECTOR, select=SELECTOR:VALUE or node=N")
        page.screenshot(path=out)
        browser.close()
    if errors:
        raise SystemExit(f"{page_path}: the page raised {errors}")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    main(*sys.argv[1:])
