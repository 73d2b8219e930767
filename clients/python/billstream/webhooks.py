"""Webhook verification. Billstream signs every delivery twice (docs/api/webhooks.md):
`X-Billstream-Signature`, the hex HMAC-SHA256 of the raw body keyed with the whole `whsec_`
secret, and the Standard Webhooks `webhook-signature`, the base64 HMAC-SHA256 of
`<webhook-id>.<webhook-timestamp>.<body>` keyed with the base64 part of the secret. Both must
match, compared in constant time (hmac.compare_digest); the second binds the timestamp, so a
delivery replayed outside `tolerance_seconds` fails even though its body is unchanged."""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import time
from typing import Any, Dict, Iterable, Literal, Mapping, Optional, Tuple, TypedDict, Union, cast

from ._types import WebhookEventName

SECRET_PREFIX = "whsec_"
SIGNATURE_HEADER = "x-billstream-signature"
DEFAULT_TOLERANCE_SECONDS = 300

Reason = Literal["missing_header", "bad_signature", "timestamp_out_of_tolerance", "bad_secret", "bad_body"]
#: Request headers as a framework gives them: a mapping (any case), an http.client.HTTPMessage
#: or email.message.Message, or (name, value) pairs.
Headers = Union[Mapping[str, str], Iterable[Tuple[str, str]]]


class WebhookEnvelope(TypedDict):
    """The body of a delivery: `payload` holds the resource by name (`customer`, `wallet`,
    `transaction`, `invoice`, `subscription`, `payment`); a test delivery carries
    `{"test": True, "webhook_endpoint_id": ...}`."""

    id: str
    event_name: WebhookEventName
    tenant_id: str
    environment_id: str
    user_id: str
    timestamp: str
    payload: Dict[str, Any]


class WebhookVerificationError(Exception):
    def __init__(self, message: str, reason: Reason) -> None:
        super().__init__(message)
        self.reason: Reason = reason


def verify_webhook(body: bytes, headers: Headers, secret: str, *, tolerance_seconds: int = DEFAULT_TOLERANCE_SECONDS, now: Optional[float] = None) -> bool:
    """True when both signatures of the delivery match its exact bytes and its timestamp is
    within `tolerance_seconds` of now; False otherwise. `body` must be the raw bytes received."""
    try:
        parse_webhook(body, headers, secret, tolerance_seconds=tolerance_seconds, now=now)
    except WebhookVerificationError:
        return False
    return True


def parse_webhook(body: bytes, headers: Headers, secret: str, *, tolerance_seconds: int = DEFAULT_TOLERANCE_SECONDS, now: Optional[float] = None) -> WebhookEnvelope:
    """Verifies like `verify_webhook`, then returns the envelope; raises a
    WebhookVerificationError naming the `reason` when anything does not hold."""
    if not isinstance(secret, str) or not secret.startswith(SECRET_PREFIX):
        raise WebhookVerificationError("The secret must be the whsec_ secret of the endpoint", "bad_secret")
    if isinstance(body, str):
        raise TypeError("body must be the raw bytes received, not text")
    raw = bytes(body)
    found = _lowercased(headers)
    webhook_id = _header(found, "webhook-id")
    timestamp = _header(found, "webhook-timestamp")
    signatures = _header(found, "webhook-signature")
    billstream = _header(found, SIGNATURE_HEADER)

    clock = int(time.time() if now is None else now)
    if not timestamp.isdigit() or abs(clock - int(timestamp)) > tolerance_seconds:
        raise WebhookVerificationError(f"webhook-timestamp {timestamp} is more than {tolerance_seconds} s from now", "timestamp_out_of_tolerance")

    expected_hex = hmac.new(secret.encode("utf-8"), raw, hashlib.sha256).hexdigest()
    if not re.fullmatch(r"[0-9a-fA-F]{64}", billstream) or not hmac.compare_digest(billstream.lower(), expected_hex):
        raise WebhookVerificationError(f"{SIGNATURE_HEADER} does not match the body", "bad_signature")

    try:
        key = base64.b64decode(secret[len(SECRET_PREFIX) :])
    except (binascii.Error, ValueError):
        raise WebhookVerificationError("The secret is not whsec_ followed by base64", "bad_secret") from None
    expected = hmac.new(key, f"{webhook_id}.{timestamp}.".encode("utf-8") + raw, hashlib.sha256).digest()
    matched = False
    # Several space-separated `v1,<base64>` entries may be sent while a secret is rotated.
    for entry in signatures.split(" "):
        version, _, value = entry.partition(",")
        if version != "v1" or not value:
            continue
        try:
            given = base64.b64decode(value)
        except (binascii.Error, ValueError):
            continue
        matched = hmac.compare_digest(given, expected) or matched
    if not matched:
        raise WebhookVerificationError("webhook-signature does not match the id, timestamp and body", "bad_signature")

    try:
        envelope = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise WebhookVerificationError("The body is not JSON", "bad_body") from None
    if not isinstance(envelope, dict) or envelope.get("id") != webhook_id:
        raise WebhookVerificationError("The envelope id is not the webhook-id", "bad_body")
    return cast(WebhookEnvelope, envelope)


def is_test_payload(payload: Mapping[str, Any]) -> bool:
    """A test delivery (`POST /v1/webhook-endpoints/{id}/test`), whatever its event name."""
    return payload.get("test") is True


def _lowercased(headers: Headers) -> Dict[str, str]:
    items = headers.items() if hasattr(headers, "items") else headers
    out: Dict[str, str] = {}
    for name, value in cast(Iterable[Tuple[str, str]], items):
        out.setdefault(str(name).lower(), str(value))
    return out


def _header(headers: Dict[str, str], name: str) -> str:
    value = headers.get(name, "")
    if value == "":
        raise WebhookVerificationError(f"The {name} header is missing", "missing_header")
    return value
