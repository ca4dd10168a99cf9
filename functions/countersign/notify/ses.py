"""The SES sender (``ses:FROM_ADDRESS``): SES v2 ``SendEmail`` with the raw RFC 822 message.

Raw content keeps both the text and the HTML part exactly as rendered (and is what moto stores
whole). The boto3 client is made on first use, so building a notifier at cold start costs
nothing.
"""

from __future__ import annotations

from typing import Any

from .interface import Email, SendError
from .message import render


class SesSender:
    def __init__(self, from_address: str, client: Any = None, configuration_set: str | None = None):
        if "@" not in from_address:
            raise ValueError(f"expected an email address to send from, got {from_address!r}")
        self.from_address = from_address
        self._client = client
        # Sent with it, SES publishes bounces and complaints (template.yaml: the configuration
        # set's event destination) and drops addresses on the account-level suppression list.
        self.configuration_set = configuration_set

    @property
    def client(self) -> Any:
        if self._client is None:
            # boto3 is the aws extra: the local server imports this module (to name SES in its
            # settings check) without it, and a Lambda instance pays for it on the first email only.
            import boto3

            from ..platform.botocore_config import SES_CONFIG

            self._client = boto3.client("sesv2", config=SES_CONFIG)
        return self._client

    def send(self, email: Email) -> None:
        data = render(email)
        from botocore.exceptions import BotoCoreError, ClientError  # the aws extra, as above

        options = {"ConfigurationSetName": self.configuration_set} if self.configuration_set else {}
        try:
            self.client.send_email(
                FromEmailAddress=email.from_address,
                Destination={"ToAddresses": [email.to]},
                Content={"Raw": {"Data": data}},
                **options,
            )
        except ClientError as exc:
            error = exc.response.get("Error", {})
            raise SendError(
                f"SES refused the email to {email.to!r}: {error.get('Code', 'error')}: {error.get('Message', '')}"
            ) from None
        except BotoCoreError as exc:
            raise SendError(f"cannot reach SES: {exc}") from None
