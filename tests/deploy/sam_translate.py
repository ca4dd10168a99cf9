"""Run by .venv-sam's python (tests/deploy/test_operations.py): template.yaml through the SAM
transform, as CloudFormation applies it at deploy, printed as JSON. Offline: the functions' code
is given an S3 location (as ``sam package`` would) and no managed policy is looked up.

    .venv-sam/bin/python tests/deploy/sam_translate.py template.yaml [Name=Value ...]
"""

import json
import sys

from samtranslator.translator.transform import transform
from samtranslator.yaml_helper import yaml_parse


class NoManagedPolicies:
    def load(self):
        return {}


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as fh:
        template = yaml_parse(fh.read())
    for resource in template["Resources"].values():
        if resource.get("Type") == "AWS::Serverless::Function":
            resource["Properties"]["CodeUri"] = "s3://bucket/code.zip"
    parameters = {"AWS::Region": "eu-west-1", "AWS::AccountId": "123456789012", "AWS::Partition": "aws"}
    parameters.update(arg.split("=", 1) for arg in sys.argv[2:])
    json.dump(transform(template, parameters, NoManagedPolicies()), sys.stdout)


if __name__ == "__main__":
    main()
