"""The README and docs/ hold together: every relative link (and its #anchor) resolves, the README
stays short and opens with the two commands (the product, and the whole suite that .ci/run runs),
and there is one operations guide."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CODE_BLOCK = re.compile(r"^```.*?^```", re.M | re.S)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def prose(path: Path) -> str:
    return CODE_SPAN.sub("", CODE_BLOCK.sub("", path.read_text(encoding="utf-8")))


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    return {anchor(h) for h in re.findall(r"^#+ (.+)$", CODE_BLOCK.sub("", path.read_text(encoding="utf-8")),
                                          re.M)}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    broken = []
    for target in LINK.findall(prose(page)):
        if re.match(r"^[a-z][a-z+.-]*:", target):
            continue  # https:, mailto:
        path, _, fragment = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(target)
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            broken.append(target)
    assert not broken, broken


def test_the_readme_is_short_and_opens_with_the_two_commands():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200
    assert lines[2:6] == ["```bash", lines[3], lines[4], "```"]
    assert lines[3].startswith("scripts/serve ") and lines[4].startswith("scripts/test ")
    assert "exec scripts/test" in (ROOT / ".ci" / "run").read_text()


def test_one_operations_guide():
    assert (ROOT / "docs" / "operations.md").exists()
    for gone in ("docs/operating.md", "infra/OPERATIONS.md", "infra/KEYS.md"):
        assert not (ROOT / gone).exists(), gone
    assert "operations.md" in (ROOT / "docs" / "README.md").read_text()
