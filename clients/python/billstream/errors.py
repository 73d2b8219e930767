"""The one error a call raises: an error answer of the API (its envelope, status and request
id) or a request that got no answer (`network_error`, `timeout`, status 0). The fields are
those of the TypeScript client's BillstreamError (libs/client/README.md#errors)."""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional


class BillstreamError(Exception):
    """Anything but a 2xx answer, or no answer at all."""

    def __init__(
        self,
        status: int,
        internal_error: str,
        message: str,
        *,
        details: Optional[Dict[str, Any]] = None,
        hint: Optional[str] = None,
        request_id: Optional[str] = None,
        retry_after_seconds: Optional[int] = None,
        attempts: int = 1,
    ) -> None:
        super().__init__(message)
        #: The HTTP status; 0 when no answer came (network error, timeout).
        self.status = status
        #: The envelope's code (`validation_error`, `not_found`, ...), or `network_error` / `timeout`.
        self.internal_error = internal_error
        self.message = message
        self.details = details
        #: The ingestion endpoints' hint.
        self.hint = hint
        #: `X-Request-Id` of the answer (or the one sent): quote it to find the call in the logs.
        self.request_id = request_id
        #: `Retry-After` of a 429 or 503, in seconds.
        self.retry_after_seconds = retry_after_seconds
        #: How many attempts the call made before it gave up.
        self.attempts = attempts

    @property
    def field(self) -> Optional[str]:
        """`details.field`: the bad field of a validation error."""
        value = (self.details or {}).get("field")
        return value if isinstance(value, str) else None

    def with_attempts(self, attempts: int) -> "BillstreamError":
        self.attempts = attempts
        return self

    def __str__(self) -> str:
        where = f" (request {self.request_id})" if self.request_id else ""
        return f"{self.status} {self.internal_error}: {self.message}{where}"

    def __repr__(self) -> str:
        return f"BillstreamError(status={self.status!r}, internal_error={self.internal_error!r}, message={self.message!r}, request_id={self.request_id!r})"


def error_from_answer(status: int, body: Any, request_id: Optional[str], retry_after: Optional[int]) -> BillstreamError:
    """The error of an error answer: its envelope when it has one, else a plain description."""
    envelope: Mapping[str, Any] = body if isinstance(body, dict) else {}
    error = envelope.get("error")
    error = error if isinstance(error, dict) else {}
    code = error.get("internal_error")
    message = error.get("message")
    details = error.get("details")
    hint = envelope.get("hint")
    return BillstreamError(
        status,
        code if isinstance(code, str) else ("internal_error" if status >= 500 else "http_client_error"),
        message if isinstance(message, str) else f"HTTP {status}",
        details=details if isinstance(details, dict) else None,
        hint=hint if isinstance(hint, str) else None,
        request_id=request_id,
        retry_after_seconds=retry_after,
    )


class BatcherClosedError(Exception):
    """`enqueue` after `close()`."""

    def __init__(self) -> None:
        super().__init__("The event batcher is closed")


class FlushTimeoutError(Exception):
    """`flush`/`close` with a timeout that passed first; after `close`, `unsent` holds the
    events no longer sent: keep them and send them later (their event ids keep a copy that
    did arrive from counting twice)."""

    def __init__(self, timeout: float, pending: int, unsent: Optional[List[Dict[str, Any]]] = None) -> None:
        super().__init__(f"{pending} event(s) not sent within {timeout} s")
        self.pending = pending
        self.unsent: List[Dict[str, Any]] = unsent or []
