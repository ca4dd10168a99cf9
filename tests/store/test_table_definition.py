"""template.yaml's table equals store/table.py's definition, and moto builds it from the template."""

from __future__ import annotations

import pytest

from countersign.store import table
from tests.support.aws import TABLE_LOGICAL_ID, load_template, table_resource


@pytest.fixture(scope="module")
def template():
    return load_template()


@pytest.fixture(scope="module")
def props(template):
    return table_resource(template)["Properties"]


def test_template_is_a_sam_template(template):
    assert template["Transform"] == "AWS::Serverless-2016-10-31"
    assert table.LOGICAL_ID == TABLE_LOGICAL_ID
    assert template["Resources"][table.LOGICAL_ID]["Type"] == "AWS::DynamoDB::Table"


@pytest.mark.parametrize("key", sorted(table.DEFINITION))
def test_table_definition_matches_store(props, key):
    assert props[key] == table.DEFINITION[key]


def test_template_declares_nothing_the_store_does_not_know(props):
    managed = set(table.DEFINITION) | {
        "TimeToLiveSpecification",
        "PointInTimeRecoverySpecification",
        "SSESpecification",
        "StreamSpecification",
        # Operations (tests/deploy/test_operations.py): a throughput ceiling, deletion protection.
        "OnDemandThroughput",
        "DeletionProtectionEnabled",
    }
    assert set(props) <= managed, set(props) - managed


def test_ttl_stream_pitr_sse(props):
    assert props["TimeToLiveSpecification"] == {"AttributeName": table.TTL_ATTRIBUTE, "Enabled": True}
    assert props["StreamSpecification"] == {"StreamViewType": table.STREAM_VIEW_TYPE}
    assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    # Always encrypted at rest; under the KmsKeyArn parameter's customer-managed key when one is given.
    assert props["SSESpecification"] == {
        "SSEEnabled": True,
        "SSEType": {"Fn::If": ["HasKmsKey", "KMS", {"Ref": "AWS::NoValue"}]},
        "KMSMasterKeyId": {"Fn::If": ["HasKmsKey", {"Ref": "KmsKeyArn"}, {"Ref": "AWS::NoValue"}]},
    }


def test_table_is_retained(template):
    resource = template["Resources"][table.LOGICAL_ID]
    assert resource["DeletionPolicy"] == "Retain"
    assert resource["UpdateReplacePolicy"] == "Retain"


def test_gsi_keys_are_declared_attributes():
    declared = {a["AttributeName"]: a["AttributeType"] for a in table.DEFINITION["AttributeDefinitions"]}
    used = [k["AttributeName"] for k in table.DEFINITION["KeySchema"]]
    for gsi in table.DEFINITION["GlobalSecondaryIndexes"]:
        used += [k["AttributeName"] for k in gsi["KeySchema"]]
    assert sorted(set(used)) == sorted(declared)
    assert all(t == "S" for t in declared.values())
    assert [g["IndexName"] for g in table.DEFINITION["GlobalSecondaryIndexes"]] == [table.GSI1]


def test_table_name_is_an_output(template):
    assert template["Outputs"]["TableName"]["Value"] == {"Ref": table.LOGICAL_ID}


def test_short_tags_load(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(
        "A: !Ref Table\nB: !GetAtt Table.StreamArn\nC: !Sub '${AWS::Region}'\nD: !Join [',', [a, b]]\n"
        "E: !If [Cond, {x: 1}, !Ref AWS::NoValue]\n",
        encoding="utf-8",
    )
    loaded = load_template(path)
    assert loaded["A"] == {"Ref": "Table"}
    assert loaded["B"] == {"Fn::GetAtt": ["Table", "StreamArn"]}
    assert loaded["C"] == {"Fn::Sub": "${AWS::Region}"}
    assert loaded["D"] == {"Fn::Join": [",", ["a", "b"]]}
    assert loaded["E"] == {"Fn::If": ["Cond", {"x": 1}, {"Ref": "AWS::NoValue"}]}


def test_moto_table_is_built_from_the_template():
    import boto3
    from moto import mock_aws

    from tests.support.aws import REGION, create_table_from_template

    with mock_aws():
        client = boto3.client("dynamodb", region_name=REGION)
        create_table_from_template(client, "t")
        desc = client.describe_table(TableName="t")["Table"]
        assert desc["KeySchema"] == table.DEFINITION["KeySchema"]
        assert sorted(desc["AttributeDefinitions"], key=str) == sorted(
            table.DEFINITION["AttributeDefinitions"], key=str
        )
        assert [g["IndexName"] for g in desc["GlobalSecondaryIndexes"]] == [table.GSI1]
        assert desc["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": table.STREAM_VIEW_TYPE}
        ttl = client.describe_time_to_live(TableName="t")["TimeToLiveDescription"]
        assert ttl["AttributeName"] == table.TTL_ATTRIBUTE and ttl["TimeToLiveStatus"] == "ENABLED"
