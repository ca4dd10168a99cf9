"""tests/deploy: what can be proved about the AWS deployment without an AWS account.

SAM CLI and cfn-lint live in their own virtualenv (``.venv-sam``, made by ``scripts/bootstrap
--sam``; they pin boto3, pydantic and click versions the app does not use). The checks call them
by path and fail, not skip, when they are missing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.deploy import sam_build
from tests.support.aws import REPO_ROOT, load_template

SAM_VENV = REPO_ROOT / ".venv-sam"


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/deploy/" in str(item.fspath):
            item.add_marker(pytest.mark.deploy)


SAM_BUILD_TEST = "tests/deploy/test_tools.py::test_sam_build"


def pytest_collection_finish(session):
    """A run that will run test_sam_build starts its ``sam build`` now, in the background
    (tests/deploy/sam_build.py): it is mostly waiting for the package index."""
    if session.config.option.collectonly or not any(i.nodeid == SAM_BUILD_TEST for i in session.items):
        return
    sam = SAM_VENV / "bin" / "sam"
    if os.access(sam, os.X_OK):  # else the test fails and says how to install it
        sam_build.start(sam, tool_env())


def pytest_sessionfinish(session):
    sam_build.stop()


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


@pytest.fixture(scope="session")
def template():
    return load_template()


@pytest.fixture(scope="module")
def resources(template):
    return template["Resources"]


@pytest.fixture(scope="package")
def moto_stack(tmp_path_factory):
    import logging

    from tests.deploy.rehearsal import MotoStack

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # the moto server's access log
    stack = MotoStack(tmp_path_factory.mktemp("rehearsal"))
    try:
        yield stack
    finally:
        stack.close()


@pytest.fixture(scope="package")
def rehearsal(moto_stack):
    """The whole rehearsal, run once for tests/deploy (tests/deploy/confirmation.py); the tests
    in test_rehearsal.py and test_protection.py look at what it left."""
    from tests.deploy import confirmation

    try:
        return confirmation.rehearse(moto_stack)
    except Exception as failure:
        # The functions' own logs (Powertools JSON, exceptions included, already redacted) say
        # why a step failed; their temp folder is gone by the time anyone looks.
        raise AssertionError(f"the rehearsal failed: {failure}\n{moto_stack.logs_tail()}") from failure
