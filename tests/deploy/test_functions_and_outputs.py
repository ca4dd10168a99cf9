"""template.yaml's functions and what the parameters make of them: each function's handler, runtime,
build, log group and timeout; their environment and the stack's outputs for the default and a
custom domain; what settings.load makes of that environment; and the stateful resources (table,
secrets, page bucket) retained when the stack goes.

Resolved with :func:`tests.deploy.example_stack.stack` (example parameters, names and ARNs).
"""

from __future__ import annotations

import re

from tests.deploy.example_stack import (
    CONFIGURATION_SET,
    FUNCTIONS,
    HTTP_FUNCTIONS,
    KIND,
    ORIGIN_ARN,
    SECRETS,
    SIGNING_ARN,
    STATE_ARN,
    stack,
)
from tests.support.aws import REPO_ROOT


def test_the_functions_and_their_handlers(template):
    s = stack()
    # and the smoke canary's function (SmokeTest=true; tests/deploy/test_smoke_and_dns.py)
    assert set(s.functions()) == set(FUNCTIONS) | {"SmokeFunction"}
    for name, handler in FUNCTIONS.items():
        assert s.function_property(name, "Handler") == handler
        assert s.function_property(name, "Runtime") == "python3.12"
        assert s.function_property(name, "Architectures") == ["arm64"]
        assert s.function_property(name, "CodeUri") == "functions"
        metadata = dict(s.functions()[name]["Metadata"])
        metadata.pop("checkov")  # its policy suppressions, each with its reason (tests/deploy/test_policy_checks.py)
        assert metadata == {"BuildMethod": "makefile", "ContextPath": "infra"}
        assert 128 <= s.function_property(name, "MemorySize") <= 3008
        assert s.function_property(name, "Tracing") == "Active"
        # Each function writes to its own log group, kept LogRetentionDays.
        group = s.function_property(name, "LoggingConfig")["LogGroup"]["Ref"]
        assert s.template["Resources"][group]["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionDays"}
    for name in HTTP_FUNCTIONS:
        assert s.function_property(name, "Timeout") < 29  # below the REST API's integration timeout
    # A sweep ends before the next one starts (rate(1 minute)).
    assert s.function_property("SweeperFunction", "Timeout") < 60
    makefile = (REPO_ROOT / "infra" / "Makefile").read_text()
    for name, kind in KIND.items():
        assert re.search(rf'^build-{name}:\n\tbash "\$\(INFRA\)build_function.sh" {kind} ', makefile, re.M), \
            f"infra/Makefile has no build-{name} target building {kind}"


def test_environment_and_outputs_follow_the_parameters():
    default, custom = stack(), stack(DomainName="confirm.example.com",
                                     CertificateArn="arn:aws:acm:us-east-1:123456789012:certificate/abc")
    for s, origin in ((default, "https://d111111abcdef8.cloudfront.net"), (custom, "https://confirm.example.com")):
        for function in FUNCTIONS:
            env = s.environment(function)
            assert env["COUNTERSIGN_PUBLIC_URL"] == origin
            assert env["COUNTERSIGN_STORE"] == "dynamodb://countersign-Table-X"
            assert env["COUNTERSIGN_PACKS"] == "budget,mail"
            assert env["COUNTERSIGN_BASE_PATH"] == "/"
        outputs = {k: s.resolve(v["Value"]) for k, v in s.template["Outputs"].items()}
        assert outputs["McpUrl"] == f"{origin}/mcp" and outputs["ConfirmPageUrl"] == f"{origin}/confirm"
        for function in FUNCTIONS:  # named, for the key reload after a rotation (docs/operations.md)
            assert outputs[f"{function}Name"] == f"countersign-{function}-X"
        assert outputs["NotifierDLQUrl"].startswith("https://sqs.")
    assert stack(Packs="mail").environment("ApiFunction")["COUNTERSIGN_PACKS"] == "mail"


def test_the_settings_accept_the_template_environment(tmp_path):
    """What settings.load makes of the template's values (ARNs are resolved later, at build)."""
    from countersign import settings as settings_mod

    for function in FUNCTIONS:
        env = stack().environment(function)
        loaded = settings_mod.load(env)
        assert loaded.store == env["COUNTERSIGN_STORE"] and loaded.mail == "ses:countersign@example.com"
        assert loaded.signing_key == SIGNING_ARN and loaded.state_keys == (STATE_ARN,)
        assert loaded.packs == ("budget", "mail") and loaded.public_url == "https://d111111abcdef8.cloudfront.net"
        assert loaded.origin_secret == (ORIGIN_ARN if function in HTTP_FUNCTIONS else None)
        assert loaded.ses_configuration_set == CONFIGURATION_SET
        assert (loaded.limit_connection, loaded.limit_address, loaded.limit_page) == (30, 120, 60)


def test_stateful_resources_are_retained(resources):
    for name in ("Table", *SECRETS, "SiteBucket"):
        assert resources[name]["DeletionPolicy"] == "Retain", name


def test_docs_name_every_parameter_and_output(template):
    """docs/deploy.md's parameter table and its outputs list cover the template, so neither drifts."""
    import re

    from tests.support.aws import REPO_ROOT

    text = (REPO_ROOT / "docs" / "deploy.md").read_text()
    table = "\n".join(line for line in text.splitlines() if line.startswith("| `"))
    documented = set(re.findall(r"`(\w+)`", table))
    assert set(template["Parameters"]) - documented == set(), "parameters missing from docs/deploy.md"
    [outputs] = re.findall(r"^Outputs \(.*?(?=\n\n)", text, re.M | re.S)
    assert set(template["Outputs"]) == set(re.findall(r"`([A-Z]\w+)`", outputs))
