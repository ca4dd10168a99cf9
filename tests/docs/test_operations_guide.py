"""docs/operations.md names everything an operator can set or run: every ``COUNTERSIGN_*`` variable
the package reads, and every command of the CLI (its table), so neither grows past the guide."""

from __future__ import annotations

import re
from pathlib import Path

from countersign.cli import parser

ROOT = Path(__file__).resolve().parents[2]
GUIDE = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
# read only by the smoke canary's Lambda function, which template.yaml configures itself
TEMPLATE_ONLY = {"COUNTERSIGN_SMOKE_URL", "COUNTERSIGN_SMOKE_SECRET", "COUNTERSIGN_SMOKE_ORIGIN_URL"}


def test_every_variable_the_package_reads_is_in_the_guide():
    read = {name for path in (ROOT / "functions" / "countersign").rglob("*.py")
            for name in re.findall(r"COUNTERSIGN_[A-Z_]*[A-Z]", path.read_text(encoding="utf-8"))}
    assert TEMPLATE_ONLY <= read  # (still read: else this list is stale)
    template = (ROOT / "template.yaml").read_text(encoding="utf-8")
    assert all(f"{name}:" in template for name in TEMPLATE_ONLY)
    missing = sorted(name for name in read - TEMPLATE_ONLY if name not in GUIDE)
    assert missing == [], f"not in docs/operations.md: {missing}"


def test_every_command_of_the_cli_has_a_row_in_the_guides_table():
    commands = next(a for a in parser()._actions if a.dest == "command").choices
    table = GUIDE.split("| command | does |", 1)[1].split("\n\n", 1)[0]
    missing = sorted(name for name in commands if f"`countersign {name}" not in table)
    assert missing == [], f"no row in docs/operations.md's command table: {missing}"
