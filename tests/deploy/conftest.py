"""tests/deploy: what can be proved about the AWS deployment without an AWS account.

SAM CLI and cfn-lint live in their own virtualenv (``.venv-sam``, made by ``scripts/bootstrap
--sam``; they pin boto3, pydantic and click versions the app does not use). The checks call them
by path (tests/deploy/tools.py) and fail, not skip, when they are missing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.deploy import sam_build
from tests.deploy.tools import SAM_BUILD_TEST, start_sam_build
from tests.support.aws import load_template


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/deploy/" in str(item.fspath):
            item.add_marker(pytest.mark.deploy)


def pytest_collection_finish(session):
    """A run that will run test_sam_build starts its ``sam build`` now, in the background
    (tests/deploy/sam_build.py): it is mostly waiting for the package index. In a parallel run
    the controlling process starts it (tests/conftest.py); a worker only learns where."""
    workerinput = getattr(session.config, "workerinput", None)
    if workerinput is not None:
        if "countersign_sam_build" in workerinput:
            sam_build.share(Path(workerinput["countersign_sam_build"]))
        return
    if session.config.option.collectonly or not any(i.nodeid == SAM_BUILD_TEST for i in session.items):
        return
    start_sam_build()


def pytest_sessionfinish(session):
    sam_build.stop()


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
