"""The core both clients share: a call's request (the API key, its idempotency key or event
ids filled in before the first attempt, a request id kept across retries), one attempt over
urllib, and whether and when to try again. The rules are the TypeScript client's
(docs/adr/0018-typed-client.md, docs/adr/0060-python-client.md): only what is safe to repeat
is retried (a GET, or a write carrying an idempotency key or event ids), on 429 after
Retry-After, on any 5xx and when no answer came, with exponential backoff and full jitter."""
from __future__ import annotations

import email.utils
import http.client
import json
import random
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from ._operations import OPERATIONS, Operation
from .errors import BillstreamError, error_from_answer

__version__ = "0.1.0"
DEFAULT_BASE_URL = "http://127.0.0.1:8080"
USER_AGENT = f"billstream-python/{__version__}"
def is_retried_status(status: int) -> bool:
    """The answers a call that is safe to repeat is tried again after: 429 and every 5xx."""
    return status == 429 or 500 <= status <= 599
EVENT_OPERATIONS = frozenset({"ingestEvent", "ingestEventsBulk"})


@dataclass(frozen=True)
class RetryPolicy:
    """Attempts in all (1 turns retries off), the backoff's base and cap, and the longest
    Retry-After waited for (a longer one is raised at once); seconds."""

    max_attempts: int = 4
    base_delay: float = 0.2
    max_delay: float = 5.0
    max_retry_after: float = 60.0


@dataclass(frozen=True)
class RetryInfo:
    """Told to `on_retry` before each retry: what failed and how long the client waits."""

    method: str
    path: str
    attempt: int
    delay: float
    error: BillstreamError


@dataclass
class Prepared:
    method: str
    path: str
    url: str
    headers: Dict[str, str]
    data: Optional[bytes]
    safe: bool
    request_id: str
    timeout: float
    body: Any = None


@dataclass
class Outcome:
    ok: bool
    value: Any = None
    error: Optional[BillstreamError] = None
    retry_after: Optional[str] = None
    headers: Dict[str, str] = field(default_factory=dict)


def new_key() -> str:
    return str(uuid.uuid4())


def with_event_id(event: Mapping[str, Any]) -> Dict[str, Any]:
    """The event with an `event_id` (a UUID when it has none): the API stores each id once."""
    out = dict(event)
    if out.get("event_id") is None:
        out["event_id"] = new_key()
    return out


def header_value(headers: Mapping[str, str], name: str) -> Optional[str]:
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return None


def with_idempotency(operation: Operation, body: Any, headers: Dict[str, str]) -> Any:
    """The body to send (and headers, changed in place): the idempotency key of a keyed write
    (the caller's `Idempotency-Key` header when given: the API takes both when equal, ADR
    0035), and the event id of every usage event, unless the caller gave them."""
    given = header_value(headers, "idempotency-key")
    if operation.keyed == "body" and isinstance(body, dict) and body.get("idempotency_key") is None:
        return {**body, "idempotency_key": given or new_key()}
    if operation.keyed == "header" and given is None:
        headers["Idempotency-Key"] = new_key()
    if operation.id == "ingestEvent" and isinstance(body, dict):
        return with_event_id(body)
    if operation.id == "ingestEventsBulk" and isinstance(body, dict) and isinstance(body.get("events"), list):
        return {**body, "events": [with_event_id(e) if isinstance(e, dict) else e for e in body["events"]]}
    return body


def is_safe_to_repeat(method: str, body: Any, headers: Mapping[str, str]) -> bool:
    """A GET, or a POST/PUT the server deduplicates: by `idempotency_key` (body or header) or
    `event_id` (every event of a bulk request)."""
    if method in ("GET", "HEAD"):
        return True
    if method not in ("POST", "PUT"):
        return False
    if header_value(headers, "idempotency-key"):
        return True
    if not isinstance(body, dict):
        return False
    if isinstance(body.get("idempotency_key"), str) and body["idempotency_key"] != "":
        return True
    if isinstance(body.get("event_id"), str) and body["event_id"] != "":
        return True
    events = body.get("events")
    return isinstance(events, list) and len(events) > 0 and all(isinstance(e, dict) and isinstance(e.get("event_id"), str) for e in events)


def backoff(attempt: int, policy: RetryPolicy) -> float:
    """Full jitter before attempt `attempt + 1`: a random wait in [0, min(cap, base * 2^(attempt-1))]."""
    return random.uniform(0, min(policy.max_delay, policy.base_delay * 2 ** max(0, attempt - 1)))


def retry_after_seconds(header: Optional[str], now: Optional[float] = None) -> Optional[int]:
    """Retry-After in whole seconds (seconds or an HTTP date); None when absent or unreadable."""
    if header is None or header.strip() == "":
        return None
    value = header.strip()
    if value.isdigit():
        return int(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0, int(-(-(when.timestamp() - (time.time() if now is None else now)) // 1)))


def fill_path(path: str, values: Mapping[str, Any]) -> str:
    out = path
    for name in _path_names(path):
        value = values.get(name)
        if value is None or value == "":
            raise TypeError(f'Path parameter "{name}" of {path} is missing')
        out = out.replace("{" + name + "}", urllib.parse.quote(str(value), safe=""))
    return out


def _path_names(path: str) -> List[str]:
    names: List[str] = []
    rest = path
    while "{" in rest:
        start = rest.index("{")
        end = rest.index("}", start)
        names.append(rest[start + 1 : end])
        rest = rest[end + 1 :]
    return names


def query_string(query: Optional[Mapping[str, Any]]) -> str:
    """`?a=1&b=x,y`: lists comma-separated (the API's form), booleans as true/false, None left out."""
    if not query:
        return ""
    pairs: List[Tuple[str, str]] = []
    for key, value in query.items():
        if value is None:
            continue
        if isinstance(value, (list, tuple)):
            value = ",".join(_text(v) for v in value)
        pairs.append((key, _text(value)))
    text = urllib.parse.urlencode(pairs)
    return f"?{text}" if text else ""


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class Core:
    """What Billstream and AsyncBillstream share: settings, requests, one attempt, the retry rule."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float,
        retry: RetryPolicy,
        on_retry: Optional[Callable[[RetryInfo], None]],
        user_agent: Optional[str],
    ) -> None:
        if not api_key:
            raise TypeError("Billstream: api_key is required")
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.retry = retry
        self.on_retry = on_retry
        self.user_agent = user_agent or USER_AGENT
        # No proxy from the environment: a billing API call goes where base_url says.
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def prepare(
        self,
        operation_id: str,
        path: Mapping[str, Any],
        *,
        query: Optional[Mapping[str, Any]] = None,
        body: Any = None,
        content_type: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
        request_id: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> Prepared:
        operation = OPERATIONS.get(operation_id)
        if operation is None:
            raise TypeError(f"Unknown operation {operation_id!r}")
        given = {k: str(v) for k, v in (headers or {}).items() if v is not None}
        if operation.body == "json" and body is None:
            body = {}
        body = with_idempotency(operation, body, given)
        rid = request_id or new_key()
        data: Optional[bytes] = None
        sent = {
            "Accept": "application/json",
            "Authorization": f"Bearer {self.api_key}",
            "User-Agent": self.user_agent,
            "X-Request-Id": rid,
        }
        if operation.body == "bytes":
            data = bytes(body or b"")
            sent["Content-Type"] = content_type or "application/octet-stream"
        elif body is not None:
            data = json.dumps(body, separators=(",", ":")).encode("utf-8")
            sent["Content-Type"] = "application/json"
        for key, value in given.items():
            for existing in [k for k in sent if k.lower() == key.lower()]:
                del sent[existing]
            sent[key] = value
        url = self.base_url + fill_path(operation.path, path) + query_string(query)
        safe = is_safe_to_repeat(operation.method, body, given)
        return Prepared(operation.method, operation.path, url, sent, data, safe, rid, self.timeout if timeout is None else timeout, body)

    def send(self, prepared: Prepared) -> Outcome:
        """One attempt: the answer's JSON (bytes when it is not JSON, None when empty), or its error."""
        request = urllib.request.Request(prepared.url, data=prepared.data, headers=prepared.headers, method=prepared.method)
        try:
            with self.opener.open(request, timeout=prepared.timeout) as response:
                status = response.status
                answer_headers = {k.lower(): v for k, v in response.headers.items()}
                raw = response.read()
        except urllib.error.HTTPError as err:
            status = err.code
            answer_headers = {k.lower(): v for k, v in (err.headers or {}).items()}
            try:
                raw = err.read()
            except (OSError, http.client.HTTPException):
                raw = b""
        except (socket.timeout, TimeoutError) as err:
            return self._no_answer(prepared, "timeout", f"No answer within {prepared.timeout} s", err)
        except urllib.error.URLError as err:
            if isinstance(err.reason, (socket.timeout, TimeoutError)):
                return self._no_answer(prepared, "timeout", f"No answer within {prepared.timeout} s", err)
            return self._no_answer(prepared, "network_error", f"Request failed: {err.reason}", err)
        except (OSError, http.client.HTTPException) as err:
            return self._no_answer(prepared, "network_error", f"Request failed: {err!r}", err)
        request_id = answer_headers.get("x-request-id") or prepared.request_id
        is_json = "json" in answer_headers.get("content-type", "") or (raw[:1] in (b"{", b"[") and "content-type" not in answer_headers)
        parsed: Any = None
        readable = True
        if raw and is_json:
            try:
                parsed = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                readable = False
        elif raw:
            parsed = raw
        if 200 <= status < 300:
            if not readable:
                return Outcome(False, error=BillstreamError(status, "http_client_error", "The answer is not JSON", request_id=request_id))
            return Outcome(True, value=parsed, headers=answer_headers)
        retry_after = answer_headers.get("retry-after")
        error = error_from_answer(status, parsed if readable else None, request_id, retry_after_seconds(retry_after))
        return Outcome(False, error=error, retry_after=retry_after, headers=answer_headers)

    def _no_answer(self, prepared: Prepared, code: str, message: str, cause: BaseException) -> Outcome:
        error = BillstreamError(0, code, message, request_id=prepared.request_id)
        error.__cause__ = cause
        return Outcome(False, error=error)

    def delay_or_raise(self, prepared: Prepared, outcome: Outcome, attempt: int) -> float:
        """The wait before the next attempt, or raises the outcome's error when it may not be retried."""
        error = outcome.error
        assert error is not None
        policy = self.retry
        retryable = prepared.safe and attempt < policy.max_attempts and (error.status == 0 or is_retried_status(error.status))
        named = retry_after_seconds(outcome.retry_after)
        named_delay = None if named is None else named + random.uniform(0, policy.base_delay)
        if not retryable or (named_delay is not None and named_delay > policy.max_retry_after):
            raise error.with_attempts(attempt)
        delay = named_delay if named_delay is not None else backoff(attempt, policy)
        if self.on_retry is not None:
            self.on_retry(RetryInfo(prepared.method, prepared.path, attempt, delay, error))
        return delay

    def call(self, operation_id: str, path: Mapping[str, Any], **options: Any) -> Any:
        """A blocking call with its retries: the success body, or raises a BillstreamError."""
        prepared = self.prepare(operation_id, path, **options)
        attempt = 1
        while True:
            outcome = self.send(prepared)
            if outcome.ok:
                return outcome.value
            time.sleep(self.delay_or_raise(prepared, outcome, attempt))
            attempt += 1
