"""botocore client settings for the Lambda functions: timeouts and retries that end well inside a
function's 20 s, instead of botocore's defaults (60 s read timeout, up to 4 attempts for
DynamoDB: a stuck call could outlive the invocation and API Gateway's 30 s).

* DynamoDB: connect 1 s, read 2 s, 3 attempts in ``standard`` mode (jittered backoff, throttling
  and transient errors retried): at worst about 7 s before the store raises.
* SES: read 5 s and 2 attempts: a retried ``SendEmail`` may send twice, so only one retry.
* Secrets Manager (cold start only): connect 2 s, read 5 s, 3 attempts.

``tcp_keepalive`` keeps idle connections of a warm instance from being dropped silently.
"""

from __future__ import annotations

from botocore.config import Config

DYNAMODB_CONFIG = Config(connect_timeout=1, read_timeout=2, tcp_keepalive=True,
                         retries={"mode": "standard", "total_max_attempts": 3})
SES_CONFIG = Config(connect_timeout=2, read_timeout=5, tcp_keepalive=True,
                    retries={"mode": "standard", "total_max_attempts": 2})
SECRETS_CONFIG = Config(connect_timeout=2, read_timeout=5, retries={"mode": "standard", "total_max_attempts": 3})
