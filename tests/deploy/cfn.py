"""Reading template.yaml the way CloudFormation would, enough to check it offline.

* :class:`Stack` resolves the intrinsic functions the template uses (``Ref``, ``Fn::Sub``,
  ``Fn::GetAtt``, ``Fn::If`` with its conditions, ``Fn::Join``) given parameter values and what
  the resources would be (names, ARNs, domains).
* :meth:`Stack.environment` is a function's environment as SAM merges it (Globals first).
* :meth:`Stack.statements` are a function's inline IAM statements, resolved;
  :func:`allowed` evaluates them for one IAM action, resource and condition context.
* :func:`iam_requests` turns one recorded AWS API call into the IAM authorisations it needs.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from typing import Any

from tests.support.aws import template_copy

ACCOUNT = "123456789012"
REGION = "eu-west-1"
_SUB = re.compile(r"\$\{([^}!]+)\}")


class Unsupported(Exception):
    pass


NO_VALUE = object()  # what Ref AWS::NoValue resolves to: the key or item disappears


@dataclass
class Stack:
    parameters: dict[str, str]
    refs: dict[str, str]  # logical id -> what Ref returns
    attributes: dict[str, str]  # "Logical.Attr" -> what GetAtt returns
    template: dict[str, Any] = field(default_factory=template_copy)
    stack_name: str = "countersign"

    def __post_init__(self):
        for name, spec in self.template.get("Parameters", {}).items():
            if name not in self.parameters:
                if "Default" not in spec:
                    raise Unsupported(f"parameter {name} has no default: give it a value")
                self.parameters[name] = str(spec["Default"])
        self.pseudo = {"AWS::Region": REGION, "AWS::AccountId": ACCOUNT, "AWS::Partition": "aws",
                       "AWS::URLSuffix": "amazonaws.com", "AWS::StackName": self.stack_name}

    # -- intrinsic functions -------------------------------------------------------------------

    def ref(self, name: str) -> Any:
        if name == "AWS::NoValue":
            return NO_VALUE
        for table in (self.pseudo, self.parameters, self.refs):
            if name in table:
                return table[name]
        raise Unsupported(f"Ref {name}: unknown (add it to the stack's refs)")

    def getatt(self, name: str) -> str:
        if name not in self.attributes:
            raise Unsupported(f"GetAtt {name}: unknown (add it to the stack's attributes)")
        return self.attributes[name]

    def condition(self, name: str) -> bool:
        return bool(self.resolve(self.template["Conditions"][name]))

    def resolve(self, value: Any) -> Any:
        if isinstance(value, list):
            return [r for r in (self.resolve(v) for v in value) if r is not NO_VALUE]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            [(key, arg)] = value.items()
            if key == "Ref":
                return self.ref(arg)
            if key == "Fn::GetAtt":
                return self.getatt(".".join(arg))
            if key == "Fn::Sub":
                text, local = (arg, {}) if isinstance(arg, str) else (arg[0], self.resolve(arg[1]))

                def one(match: re.Match[str]) -> str:
                    name = match.group(1)
                    if name in local:
                        return str(local[name])
                    return self.getatt(name) if "." in name and not name.startswith("AWS::") else self.ref(name)

                return _SUB.sub(one, text)
            if key == "Fn::If":
                name, yes, no = arg
                return self.resolve(yes if self.condition(name) else no)
            if key == "Fn::Equals":
                a, b = self.resolve(arg)
                return a == b
            if key == "Fn::Not":
                return not self.resolve(arg[0])
            if key == "Fn::And":
                return all(self.resolve(a) for a in arg)
            if key == "Fn::Or":
                return any(self.resolve(a) for a in arg)
            if key in ("Condition", "Fn::Condition"):  # !Condition inside Fn::And / Fn::Or
                return self.condition(arg)
            if key == "Fn::Join":
                sep, items = arg
                return sep.join(str(i) for i in self.resolve(items))
            if key.startswith("Fn::"):
                raise Unsupported(f"{key} is not modelled by tests/deploy/cfn.py")
        resolved = {k: self.resolve(v) for k, v in value.items()}
        return {k: v for k, v in resolved.items() if v is not NO_VALUE}

    # -- functions -----------------------------------------------------------------------------

    def functions(self) -> dict[str, dict]:
        return {name: res for name, res in self.template["Resources"].items()
                if res["Type"] == "AWS::Serverless::Function"}

    def function_property(self, function: str, name: str) -> Any:
        props = self.functions()[function]["Properties"]
        if name in props:
            return props[name]
        return self.template.get("Globals", {}).get("Function", {}).get(name)

    def environment(self, function: str) -> dict[str, str]:
        merged: dict[str, Any] = {}
        globals_env = self.template.get("Globals", {}).get("Function", {}).get("Environment", {})
        merged.update(globals_env.get("Variables", {}))
        merged.update(self.functions()[function]["Properties"].get("Environment", {}).get("Variables", {}))
        return {k: str(self.resolve(v)) for k, v in merged.items()}

    def statements(self, function: str) -> list[dict]:
        out = []
        for policy in self.functions()[function]["Properties"].get("Policies", []) or []:
            if not isinstance(policy, dict) or "Statement" not in policy:
                raise Unsupported(f"{function}: only inline policy documents are modelled, got {policy!r}")
            out += self.resolve(policy["Statement"])  # a statement under Fn::If may vanish (NoValue)
        return out


# -- IAM -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """One authorisation an AWS call needs: an IAM action on one of ``resources`` (SES checks the
    identity that covers the sender, the address or its domain), with condition keys."""

    action: str
    resources: tuple[str, ...]
    context: tuple[tuple[str, str], ...] = ()


def _as_list(value: Any) -> list:
    return value if isinstance(value, list) else [value]


def _condition_holds(condition: dict, context: dict[str, str]) -> bool:
    for operator, tests in condition.items():
        for key, expected in tests.items():
            actual = context.get(key)
            if operator == "StringEquals":
                if actual is None or actual not in _as_list(expected):
                    return False
            elif operator == "StringLike":
                if actual is None or not any(fnmatch.fnmatchcase(actual, e) for e in _as_list(expected)):
                    return False
            else:
                raise Unsupported(f"condition operator {operator} is not modelled")
    return True


def allowed(statements: list[dict], request: Request) -> bool:
    context = dict(request.context)
    for statement in statements:
        if statement.get("Effect") != "Allow":
            continue
        actions = [a.lower() for a in _as_list(statement.get("Action", []))]
        if not any(fnmatch.fnmatchcase(request.action.lower(), a) for a in actions):
            continue
        patterns = _as_list(statement.get("Resource", []))
        if not any(fnmatch.fnmatchcase(res, r) for res in request.resources for r in patterns):
            continue
        if _condition_holds(statement.get("Condition", {}), context):
            return True
    return False


def _table_arn(name: str) -> str:
    return f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{name}"


# A TransactWriteItems element is authorised as the single-item action it performs (AWS docs:
# "Using IAM with DynamoDB transactions"); there is no dynamodb:TransactWriteItems action.
TRANSACT_ACTIONS = {"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem",
                    "ConditionCheck": "ConditionCheckItem", "Get": "GetItem"}


def iam_requests(call: dict) -> list[Request]:
    """The IAM authorisations one recorded call (tests/deploy/worker.py) needs."""
    service, operation, params = call["service"], call["operation"], call["params"]
    if service == "dynamodb":
        if operation in ("TransactWriteItems", "TransactGetItems"):
            out = []
            for item in params["TransactItems"]:
                [(kind, body)] = item.items()
                out.append(Request(f"dynamodb:{TRANSACT_ACTIONS[kind]}", (_table_arn(body["TableName"]),)))
            return out
        if operation in ("BatchGetItem", "BatchWriteItem"):
            return [Request(f"dynamodb:{operation}", (_table_arn(t),)) for t in params["Tables"]]
        resource = _table_arn(params["TableName"])
        if params.get("IndexName"):
            resource += f"/index/{params['IndexName']}"
        return [Request(f"dynamodb:{operation}", (resource,))]
    if service == "sesv2" and operation == "SendEmail":
        sender = params["FromEmailAddress"]
        address = sender.rsplit("<", 1)[-1].rstrip(">").strip()
        domain = address.rsplit("@", 1)[1]
        context = (("ses:FromAddress", address),)
        # SES authorises against the identity that covers the sender: the address or its domain.
        identities = tuple(f"arn:aws:ses:{REGION}:{ACCOUNT}:identity/{i}" for i in (address, domain))
        actions = ["ses:SendEmail"] + (["ses:SendRawEmail"] if "Raw" in params.get("Content", []) else [])
        out = [Request(a, identities, context) for a in actions]
        if params.get("ConfigurationSetName"):  # authorised on the configuration set as well
            config = (f"arn:aws:ses:{REGION}:{ACCOUNT}:configuration-set/{params['ConfigurationSetName']}",)
            out += [Request(a, config, context) for a in actions]
        return out
    if service == "secretsmanager" and operation == "GetSecretValue":
        return [Request("secretsmanager:GetSecretValue", (params["SecretId"],))]
    raise Unsupported(f"no IAM mapping for {service}.{operation}: add one to tests/deploy/cfn.py")
