"""AWS WAF in front of CloudFront: AWS's managed rule groups and a rate limit per client address,
that never block an MCP JSON-RPC body, an /api body or an OAuth loopback redirect; created by the
stack in us-east-1 (the only region a CLOUDFRONT web ACL can live in), by infra/edge-waf.yaml for
a stack elsewhere, with the same rules; a deploy outside us-east-1 without one is refused."""

from __future__ import annotations

from tests.deploy.example_stack import EDGE_WEB_ACL, stack
from tests.support.aws import REPO_ROOT, load_template

EDGE_TEMPLATE = REPO_ROOT / "infra" / "edge-waf.yaml"
MANAGED = ["AWSManagedRulesAmazonIpReputationList", "AWSManagedRulesCommonRuleSet",
           "AWSManagedRulesKnownBadInputsRuleSet"]
# The common rule set's rules that would refuse what /mcp, /api and /oauth legitimately carry: a
# JSON body over 8 KB, markup, paths or URLs inside a tool's arguments or a token request, and a
# native client's http://127.0.0.1 redirect_uri in /oauth/authorize's query. They count instead.
COUNTED = {"SizeRestrictions_BODY", "CrossSiteScripting_BODY", "GenericLFI_BODY", "GenericRFI_BODY",
           "EC2MetaDataSSRF_BODY", "GenericRFI_QUERYARGUMENTS"}


def web_acl(s=None) -> dict:
    s = s or stack()
    return s.resolve(s.template["Resources"]["EdgeWebAcl"]["Properties"])


def distribution_acl(s) -> str | None:
    return s.resolve(s.template["Resources"]["Distribution"]["Properties"]["DistributionConfig"]).get("WebACLId")


def test_managed_rule_groups_and_a_rate_limit_per_address():
    acl = web_acl()
    assert acl["Scope"] == "CLOUDFRONT" and acl["DefaultAction"] == {"Allow": {}}
    rules = {r["Name"]: r for r in acl["Rules"]}
    assert sorted(r["Priority"] for r in rules.values()) == list(range(len(rules)))
    rate = rules["RequestsPerAddress"]
    assert rate["Priority"] == 0 and rate["Action"] == {"Block": {}}
    assert rate["Statement"]["RateBasedStatement"] == {"AggregateKeyType": "IP", "Limit": "6000",
                                                       "EvaluationWindowSec": "300"}
    tuned = web_acl(stack(EdgeRequestsPerAddress="900", EdgeRateWindowSeconds="60"))
    assert tuned["Rules"][0]["Statement"]["RateBasedStatement"]["Limit"] == "900"
    assert tuned["Rules"][0]["Statement"]["RateBasedStatement"]["EvaluationWindowSec"] == "60"
    for name in MANAGED:
        group = rules[name]
        assert group["OverrideAction"] == {"None": {}}  # the group's own actions apply
        assert group["Statement"]["ManagedRuleGroupStatement"]["VendorName"] == "AWS"
        assert group["Statement"]["ManagedRuleGroupStatement"]["Name"] == name
    overrides = rules["AWSManagedRulesCommonRuleSet"]["Statement"]["ManagedRuleGroupStatement"]["RuleActionOverrides"]
    assert {o["Name"] for o in overrides} == COUNTED
    assert all(o["ActionToUse"] == {"Count": {}} for o in overrides)
    for name in ("AWSManagedRulesAmazonIpReputationList", "AWSManagedRulesKnownBadInputsRuleSet"):
        assert "RuleActionOverrides" not in rules[name]["Statement"]["ManagedRuleGroupStatement"]


def test_the_rate_limit_sits_above_the_products_own_limits(template):
    """A busy client meets the product's 429 with Retry-After before AWS WAF's bare 403."""
    params = template["Parameters"]
    per_window = int(params["EdgeRequestsPerAddress"]["Default"])
    window = int(params["EdgeRateWindowSeconds"]["Default"])
    product = (int(params["RequestsPerAddress"]["Default"]) + int(params["PageRequestsPerAddress"]["Default"])) \
        * window // 10
    assert per_window > product


def test_bodies_only_reach_the_api_paths(template):
    """Why counting the body rules is scoped knowingly: the page's behaviour takes no body."""
    config = template["Resources"]["Distribution"]["Properties"]["DistributionConfig"]
    assert config["DefaultCacheBehavior"]["AllowedMethods"] == ["GET", "HEAD"]
    assert {b["PathPattern"] for b in config["CacheBehaviors"]} == {"/api/*", "/slack/*", "/mcp", "/oauth/*",
                                                                   "/.well-known/*"}


def test_which_web_acl_the_distribution_uses():
    # In us-east-1 with no ARN given: the stack's own.
    here = stack()
    here.pseudo["AWS::Region"] = "us-east-1"
    assert here.condition("CreatesEdgeWebAcl") and distribution_acl(here) == EDGE_WEB_ACL
    # Elsewhere: the one infra/edge-waf.yaml made, named by EdgeWebAclArn (the stack makes none).
    given = "arn:aws:wafv2:us-east-1:123456789012:global/webacl/countersign-edge/ffff"
    elsewhere = stack(EdgeWebAclArn=given)
    assert not elsewhere.condition("CreatesEdgeWebAcl") and distribution_acl(elsewhere) == given
    # none: no AWS WAF, said explicitly.
    assert distribution_acl(stack(EdgeWebAclArn="none")) is None


def test_outside_us_east_1_a_deploy_without_a_web_acl_is_refused(template):
    rule = template["Rules"]["EdgeWebAclOutsideUsEast1"]
    assert rule["RuleCondition"] == {"Fn::Not": [{"Fn::Equals": [{"Ref": "AWS::Region"}, "us-east-1"]}]}
    [assertion] = rule["Assertions"]
    assert assertion["Assert"] == {"Fn::Not": [{"Fn::Equals": [{"Ref": "EdgeWebAclArn"}, ""]}]}
    assert "infra/edge-waf.yaml" in assertion["AssertDescription"]
    # eu-west-1 (the example stack) with the default "" makes no web ACL: the rule above stops it.
    assert not stack().condition("CreatesEdgeWebAcl")
    pattern = template["Parameters"]["EdgeWebAclArn"]["AllowedPattern"]
    import re

    for ok in ("", "none", EDGE_WEB_ACL):
        assert re.fullmatch(pattern, ok), ok
    for wrong in ("arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/x/1", "None", "arn:aws:s3:::bucket"):
        assert not re.fullmatch(pattern, wrong), wrong


def test_infra_edge_waf_has_the_same_rules(template):
    edge = load_template(EDGE_TEMPLATE)
    ours, theirs = template["Resources"]["EdgeWebAcl"], edge["Resources"]["EdgeWebAcl"]
    assert theirs["Properties"] == ours["Properties"]
    assert "Condition" not in theirs and ours["Condition"] == "CreatesEdgeWebAcl"
    for name in ("EdgeRequestsPerAddress", "EdgeRateWindowSeconds"):
        assert edge["Parameters"][name] == template["Parameters"][name]
    assert edge["Outputs"]["WebAclArn"]["Value"] == {"Fn::GetAtt": ["EdgeWebAcl", "Arn"]}
