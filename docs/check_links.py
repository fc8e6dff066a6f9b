"""Offline link check of the built site: every internal link and anchor must resolve.

``python docs/check_links.py docs/_build/html`` reads every HTML page of the build, and for
each ``href`` and ``src`` that is not an external address (``http:``, ``https:``, ``mailto:``,
``data:``) checks that the file it names exists and, when it names an anchor, that the page
holds an element with that ``id``. External addresses are not fetched (the build runs
offline). Exit status 1, with one line per broken link, when any link is broken.
"""

from __future__ import annotations

import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

EXTERNAL = ("http:", "https:", "mailto:", "data:", "javascript:", "ftp:")


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for key, value in attrs:
            if value is None:
                continue
            if key in ("id", "name") and (key == "id" or tag == "a"):
                self.ids.add(value)
            elif key in ("href", "src") and not (tag == "link" and value.endswith("#")):
                self.links.append(value)


def _parse(path: Path, cache: dict[Path, _Page]) -> _Page:
    if path not in cache:
        page = _Page()
        page.feed(path.read_text(encoding="utf-8", errors="replace"))
        cache[path] = page
    return cache[path]


def site_pages(root: Path) -> list[Path]:
    """The site's pages (the theme's files under ``_static`` are not pages)."""
    return [p for p in sorted(root.rglob("*.html")) if "_static" not in p.relative_to(root).parts]


def broken_links(root: Path, pages: list[Path] | None = None) -> list[str]:
    """One line per broken internal link of ``pages`` (default: every page under ``root``)."""
    root = root.resolve()
    cache: dict[Path, _Page] = {}
    broken = []
    for page_path in pages if pages is not None else site_pages(root):
        page_path = page_path.resolve()
        for link in _parse(page_path, cache).links:
            if link.lower().startswith(EXTERNAL) or link.startswith("//"):
                continue
            parts = urlsplit(link)
            target = (
                (page_path.parent / unquote(parts.path)).resolve() if parts.path else page_path
            )
            if target.is_dir():
                target = target / "index.html"
            where = f"{page_path.relative_to(root)}: {link}"
            if not target.exists():
                broken.append(f"{where} (no file {target})")
            elif parts.fragment and target.suffix == ".html":
                if unquote(parts.fragment) not in _parse(target, cache).ids:
                    broken.append(f"{where} (no anchor #{parts.fragment})")
    return broken


def main(argv: list[str]) -> int:
    root = Path(argv[0] if argv else "docs/_build/html")
    broken = broken_links(root)
    for line in broken:
        print(f"broken link: {line}")
    count = len(site_pages(root))
    print(f"{count} pages checked offline: {len(broken)} broken internal links")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
