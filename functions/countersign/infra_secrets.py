"""Secrets Manager access for keys given as ARNs (deployed stacks). Cached per process."""

from __future__ import annotations


def load_secret(arn: str) -> str:
    """The secret string behind ``arn``, fetched once per cold start (Powertools cache, 1 h)."""
    from aws_lambda_powertools.utilities import parameters

    return parameters.get_secret(arn, max_age=3600)
