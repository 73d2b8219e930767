"""`Billstream` (blocking) and `AsyncBillstream` (asyncio): a method per operation of
docs/openapi.json (generated in _operations.py), the reservation helpers (_reservations.py), the same core (_core.py) for requests,
idempotency keys and retries, and `events`, the usage event batcher."""
from __future__ import annotations

import asyncio
import atexit
import logging
import os
import weakref
from typing import Any, Callable, Dict, List, Mapping, Optional

from ._batcher import BatcherStats, ErrorHandler, Event, EventBatcher
from ._core import DEFAULT_BASE_URL, Core, RetryInfo, RetryPolicy
from ._reservations import AsyncReservations, SyncReservations
from .errors import FlushTimeoutError

log = logging.getLogger("billstream")


class Billstream(SyncReservations):
    """The blocking client: `Billstream("https://billing.example.com", api_key)`.

    `timeout` is per attempt (seconds); `retry` sets the retries of calls, `events` the
    batcher's settings (keyword arguments of EventBatcher); `close_timeout` bounds the flush
    of buffered events when the interpreter exits."""

    def __init__(
        self,
        base_url: Optional[str] = None,
        api_key: Optional[str] = None,
        *,
        timeout: float = 30.0,
        retry: Optional[RetryPolicy] = None,
        on_retry: Optional[Callable[[RetryInfo], None]] = None,
        events: Optional[Mapping[str, Any]] = None,
        close_timeout: float = 10.0,
        user_agent: Optional[str] = None,
    ) -> None:
        self._core = Core(
            base_url or os.environ.get("BILLSTREAM_BASE_URL") or DEFAULT_BASE_URL,
            api_key or os.environ.get("BILLSTREAM_API_KEY") or "",
            timeout=timeout,
            retry=retry or RetryPolicy(),
            on_retry=on_retry,
            user_agent=user_agent,
        )
        self._event_options = dict(events or {})
        self._close_timeout = close_timeout
        self._batcher: Optional[EventBatcher] = None

    @property
    def base_url(self) -> str:
        return self._core.base_url

    def _call(self, operation_id: str, path: Dict[str, str], **options: Any) -> Any:
        return self._core.call(operation_id, path, **options)

    def call(self, operation_id: str, path: Optional[Mapping[str, Any]] = None, **options: Any) -> Any:
        """Any operation of the table by its operationId (what the named methods call)."""
        return self._core.call(operation_id, path or {}, **options)

    @property
    def events(self) -> EventBatcher:
        """Usage events in bulk: `client.events.enqueue(event)`; `close()` sends the rest."""
        if self._batcher is None:
            self._batcher = EventBatcher(self._send_bulk, **self._event_options)
            _close_at_exit(self._batcher, self._close_timeout)
        return self._batcher

    def _send_bulk(self, events: List[Event]) -> None:
        self._core.call("ingestEventsBulk", {}, body={"events": events})

    def close(self, timeout: Optional[float] = None) -> None:
        """Sends every buffered event, then refuses new ones."""
        if self._batcher is not None:
            self._batcher.close(timeout)

    def __enter__(self) -> "Billstream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncEventBatcher:
    """`await client.events.enqueue(event)`: the thread batcher, awaited without blocking the loop."""

    def __init__(self, batcher: EventBatcher) -> None:
        self.batcher = batcher

    @property
    def stats(self) -> BatcherStats:
        return self.batcher.stats

    @property
    def pending(self) -> int:
        return self.batcher.pending

    async def enqueue(self, event: Mapping[str, Any]) -> str:
        try:
            return self.batcher.enqueue(event, timeout=0)
        except TimeoutError:  # full: wait for room off the loop (back pressure)
            return await asyncio.to_thread(self.batcher.enqueue, event)

    async def flush(self, timeout: Optional[float] = None) -> None:
        await asyncio.to_thread(self.batcher.flush, timeout)

    async def close(self, timeout: Optional[float] = None) -> None:
        await asyncio.to_thread(self.batcher.close, timeout)


class AsyncBillstream(AsyncReservations):
    """The asyncio client: the same methods as coroutines, the same core. Each attempt runs
    in a worker thread (urllib blocks); waits between attempts are `asyncio.sleep`."""

    def __init__(
        self,
        base_url: Optional[str] = None,
        api_key: Optional[str] = None,
        *,
        timeout: float = 30.0,
        retry: Optional[RetryPolicy] = None,
        on_retry: Optional[Callable[[RetryInfo], None]] = None,
        events: Optional[Mapping[str, Any]] = None,
        close_timeout: float = 10.0,
        user_agent: Optional[str] = None,
    ) -> None:
        self._sync = Billstream(base_url, api_key, timeout=timeout, retry=retry, on_retry=on_retry, events=events, close_timeout=close_timeout, user_agent=user_agent)
        self._core = self._sync._core
        self._events: Optional[AsyncEventBatcher] = None

    async def _call(self, operation_id: str, path: Dict[str, str], **options: Any) -> Any:
        prepared = self._core.prepare(operation_id, path, **options)
        attempt = 1
        while True:
            outcome = await asyncio.to_thread(self._core.send, prepared)
            if outcome.ok:
                return outcome.value
            await asyncio.sleep(self._core.delay_or_raise(prepared, outcome, attempt))
            attempt += 1

    async def call(self, operation_id: str, path: Optional[Mapping[str, Any]] = None, **options: Any) -> Any:
        return await self._call(operation_id, dict(path or {}), **options)

    @property
    def events(self) -> AsyncEventBatcher:
        if self._events is None:
            self._events = AsyncEventBatcher(self._sync.events)
        return self._events

    async def close(self, timeout: Optional[float] = None) -> None:
        if self._events is not None:
            await self._events.close(timeout)

    async def __aenter__(self) -> "AsyncBillstream":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _close_at_exit(batcher: EventBatcher, timeout: float) -> None:
    """At interpreter exit, flush what is still buffered (up to `timeout`); a weak reference,
    so a client dropped earlier is not kept alive for it."""
    ref = weakref.ref(batcher)

    def close() -> None:
        live = ref()
        if live is None or live.closed and live.pending == 0:
            return
        try:
            live.close(timeout)
        except FlushTimeoutError as err:
            log.error("billstream: %d usage event(s) not sent at exit: %s", len(err.unsent), [e.get("event_id") for e in err.unsent])

    atexit.register(close)


__all__ = ["AsyncBillstream", "AsyncEventBatcher", "Billstream", "ErrorHandler"]
