"""Secrets Manager access for keys given as ARNs (deployed stacks). Cached per process.

:func:`countersign.runtime.build` imports this module wherever it runs, the local server included,
which has no ``aws`` extra: Powertools and boto3 are imported when a secret is read, never here.
"""

from __future__ import annotations

import logging


def load_secret(arn: str) -> str:
    """The secret string behind ``arn``, fetched once per cold start (Powertools cache, 1 h)."""
    # Inside the function: the aws extra is optional (the local server imports this module without it).
    from aws_lambda_powertools.utilities import parameters

    return parameters.get_secret(arn, max_age=3600)


def load_previous_secret(arn: str) -> str | None:
    """The value ``arn`` held before its last ``put-secret-value`` (stage ``AWSPREVIOUS``), read
    once per cold start; None if it never changed."""
    # Inside the function: the aws extra is optional (the local server imports this module without it).
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError

    from .botocore_config import SECRETS_CONFIG

    client = boto3.client("secretsmanager", config=SECRETS_CONFIG)
    try:
        return client.get_secret_value(SecretId=arn, VersionStage="AWSPREVIOUS").get("SecretString")
    except client.exceptions.ResourceNotFoundException:
        return None
    except (BotoCoreError, ClientError) as exc:  # only the current value is then accepted
        logging.getLogger("countersign").warning("could not read the previous value of %s: %s", arn, exc)
        return None


def read_secret(arn: str) -> str:
    """The current value of ``arn``, read now (no cache): the smoke test's credentials."""
    # Inside the function: the aws extra is optional (the local server imports this module without it).
    import boto3

    from .botocore_config import SECRETS_CONFIG

    return boto3.client("secretsmanager", config=SECRETS_CONFIG).get_secret_value(SecretId=arn)["SecretString"]


def write_secret(arn: str, value: str) -> None:
    """A new current value for ``arn`` (``countersign smoke setup --secret``)."""
    # Inside the function: the aws extra is optional (the local server imports this module without it).
    import boto3

    from .botocore_config import SECRETS_CONFIG

    boto3.client("secretsmanager", config=SECRETS_CONFIG).put_secret_value(SecretId=arn, SecretString=value)
