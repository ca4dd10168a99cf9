"""What the process runs on, kept apart from what the product does.

* :mod:`.telemetry`: the Lambda functions' logs, metrics and traces (Powertools); only the entry
  points (``countersign.handlers``) use it.
* :mod:`.secrets_manager`: keys given as Secrets Manager ARNs, read once per cold start.
* :mod:`.botocore_config`: timeouts and retries of the DynamoDB, SES and Secrets Manager clients.
* :mod:`.heap`: what a process built to start, frozen out of the garbage collector's full
  collections (the Lambda functions and the local server alike).

Everything AWS needs (boto3, botocore, Powertools) is the optional ``aws`` extra: the local server
runs without it. So this package's ``__init__`` imports nothing; :mod:`.telemetry` and
:mod:`.botocore_config` are imported only where AWS is in use (the entry points; the DynamoDB store
and the SES mailer, when configured); :mod:`.secrets_manager` imports the extra only when it reads
a secret. Log redaction, which every surface uses, is :mod:`countersign.logs`.
"""
