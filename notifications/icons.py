"""Draw the installable app's PNG icons from the favicon: ``python -m notifications.icons``.

The manifest needs 192 and 512 pixel PNGs (browsers want raster icons to install an app); they
are drawn from ``static/favicon.svg`` by Debian's Chromium through Playwright (the test tools),
so the icons stay the favicon. Run it again after changing the favicon, and commit the PNGs.
"""

from __future__ import annotations

import shutil
from pathlib import Path

STATIC = Path(__file__).resolve().parent.parent / "static"
SIZES = (192, 512)


def main() -> None:
    from playwright.sync_api import sync_playwright

    svg = (STATIC / "favicon.svg").read_text()
    out = STATIC / "icons"
    out.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"))
        for size in SIZES:
            page = browser.new_page(viewport={"width": size, "height": size})
            sized = svg.replace("<svg ", f'<svg width="{size}" height="{size}" ', 1)
            page.set_content(f'<body style="margin:0">{sized}</body>')
            page.screenshot(path=str(out / f"icon-{size}.png"), omit_background=True)
            page.close()
        browser.close()


if __name__ == "__main__":
    main()
