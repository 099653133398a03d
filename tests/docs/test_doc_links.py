"""Every relative link of ``README.md`` and of the ``docs/*.md`` pages names a file that exists, and
its ``#anchor``, if any, a heading of that file; the README links every ``docs/`` page.

Anchors are GitHub's: a heading's text, markdown code marks removed, lower-cased, every character
that is not a letter, digit, ``_``, ``-`` or space dropped, spaces turned into ``-``; a repeated
heading gets ``-1``, ``-2``, ...  Links and headings inside fenced code blocks and inline code are
not links or headings.
"""
from __future__ import annotations

import re
from pathlib import Path

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "contstim_bench").is_dir())
FENCE = re.compile(r"^```")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def prose_lines(text: str) -> list[str]:
    """The lines of ``text`` outside fenced code blocks, inline code removed."""
    out, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            out.append(line)
    return out


def slug(heading: str) -> str:
    """GitHub's anchor of a heading's text."""
    text = CODE_SPAN.sub(lambda m: m.group(2), heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for line in prose_lines(text):
        m = HEADING.match(line)
        if m:
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(text: str) -> list[str]:
    return [m.group(1) for line in prose_lines(text) for m in LINK.finditer(CODE_SPAN.sub("", line))]


def broken_links(root: Path, pages: list[Path]) -> list[str]:
    """``PAGE: TARGET (why)`` for every relative link of ``pages`` that does not resolve."""
    out = []
    for page in pages:
        for target in links(page.read_text(encoding="utf-8")):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, ...
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page.resolve()
            name = f"{page.relative_to(root).as_posix()}: {target}"
            if not dest.exists():
                out.append(f"{name} (no such file)")
            elif root.resolve() not in dest.parents and dest != root.resolve():
                out.append(f"{name} (outside the repository)")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text(encoding="utf-8")):
                out.append(f"{name} (no heading with that anchor)")
    return out


def pages(root: Path) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def test_every_relative_link_resolves():
    assert broken_links(ROOT, pages(ROOT)) == []


def test_the_readme_links_every_docs_page():
    linked = {(ROOT / t.partition("#")[0]).resolve() for t in links((ROOT / "README.md").read_text(encoding="utf-8"))}
    assert [p.name for p in pages(ROOT)[1:] if p.resolve() not in linked] == []


def test_anchors_are_githubs():
    assert slug("Ship: a wheel, Spaces and the datasets") == "ship-a-wheel-spaces-and-the-datasets"
    assert slug("Plausibility (Kauf et al. 2024) and BLiMP (Kauf & Ivanova 2023)") == \
        "plausibility-kauf-et-al-2024-and-blimp-kauf--ivanova-2023"
    assert slug("Which models are here: `contstim models`") == "which-models-are-here-contstim-models"
    assert anchors("# A\n## A\n```bash\n# not a heading\n```\n## B_c\n") == {"a", "a-1", "b_c"}


def test_a_broken_file_or_anchor_is_reported(tmp_path):
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    (root / "README.md").write_text(
        "# Top\n\n[ok](docs/a.md#part-one) [gone](docs/b.md) [bad anchor](docs/a.md#part-2)\n"
        "[self](#top) [web](https://example.org/x.md) `[code](nowhere.md)`\n"
        "```md\n[fenced](nowhere.md)\n```\n", encoding="utf-8")
    (root / "docs" / "a.md").write_text("# Part one\n\n[up](../README.md#top) [out](../../x.md)\n",
                                        encoding="utf-8")
    (tmp_path / "x.md").write_text("outside\n", encoding="utf-8")
    assert broken_links(root, pages(root)) == [
        "README.md: docs/b.md (no such file)",
        "README.md: docs/a.md#part-2 (no heading with that anchor)",
        "docs/a.md: ../../x.md (outside the repository)",
    ]
