"""SAM CLI and cfn-lint, as tests/deploy calls them: by path in their own virtualenv (``.venv-sam``,
made by ``scripts/bootstrap --sam``), offline."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.deploy import sam_build
from tests.support.aws import REPO_ROOT

SAM_VENV = REPO_ROOT / ".venv-sam"
SAM_BUILD_TEST = "tests/deploy/test_tools.py::test_sam_build"


def tool(name: str) -> Path:
    path = SAM_VENV / "bin" / name
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} is missing: run `scripts/bootstrap --sam` (scripts/test does) to install "
                    f"aws-sam-cli and cfn-lint into .venv-sam", pytrace=False)
    return path


def tool_env() -> dict[str, str]:
    """Offline: a region (sam validate needs one), no credentials, no telemetry."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_DEFAULT_REGION="eu-west-1", AWS_REGION="eu-west-1", SAM_CLI_TELEMETRY="0",
               AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_EC2_METADATA_DISABLED="true")
    return env


def start_sam_build(folder: Path | None = None) -> None:
    """Start test_sam_build's ``sam build`` in the background (tests/deploy/sam_build.py)."""
    sam = SAM_VENV / "bin" / "sam"
    if os.access(sam, os.X_OK):  # else the test fails and says how to install it
        sam_build.start(sam, tool_env(), folder)
