"""Billstream's Python client: a method per operation of the API (typed from
docs/openapi.json), retries that never do the work twice, a usage event batcher and webhook
verification. Standard library only (Python 3.10+). See clients/python/README.md."""
from ._batcher import BatcherStats, EventBatcher
from ._client import AsyncBillstream, AsyncEventBatcher, Billstream
from ._reservations import ReserveBody
from ._core import DEFAULT_BASE_URL, RetryInfo, RetryPolicy, __version__
from ._operations import OPERATIONS, Operation
from .errors import BatcherClosedError, BillstreamError, FlushTimeoutError
from .webhooks import WebhookEnvelope, WebhookVerificationError, is_test_payload, parse_webhook, verify_webhook

__all__ = [
    "AsyncBillstream",
    "AsyncEventBatcher",
    "BatcherClosedError",
    "BatcherStats",
    "Billstream",
    "BillstreamError",
    "DEFAULT_BASE_URL",
    "EventBatcher",
    "FlushTimeoutError",
    "OPERATIONS",
    "Operation",
    "RetryInfo",
    "ReserveBody",
    "RetryPolicy",
    "WebhookEnvelope",
    "WebhookVerificationError",
    "__version__",
    "is_test_payload",
    "parse_webhook",
    "verify_webhook",
]
