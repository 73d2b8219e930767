"""The usage event batcher behind `client.events` (libs/client/README.md#usage-events-the-batcher
describes the same promises): `enqueue` gives each event its `event_id` at once and buffers it;
bulk requests of up to 1,000 leave when a batch is full or the oldest buffered event has waited
`flush_interval`. A batch that fails for a passing reason (no answer, 408, 429, 5xx) is sent
again with the same event ids until it is accepted, so the API's dedup keeps every event once.
Buffered and in-flight events are capped: `enqueue` blocks for room (back pressure). `flush()`
and `close()` return once what was enqueued before them is accepted or refused for good."""
from __future__ import annotations

import logging
import random
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Deque, Dict, List, Mapping, Optional

from ._core import with_event_id
from .errors import BatcherClosedError, BillstreamError, FlushTimeoutError

log = logging.getLogger("billstream")
Event = Dict[str, Any]
#: Sends one bulk request; raises a BillstreamError when it is not accepted.
BatchSender = Callable[[List[Event]], None]
#: Told of every failed send: `will_retry` False means the API refused these events for good.
ErrorHandler = Callable[[BillstreamError, List[Event], int, bool], None]


@dataclass
class BatcherStats:
    enqueued: int = 0
    #: Accepted by the API (202).
    sent: int = 0
    #: Refused for good and handed to on_error.
    refused: int = 0
    #: Sends of a batch after a failure.
    retries: int = 0
    batches: int = 0


@dataclass
class _Entry:
    seq: int
    event: Event
    at: float


@dataclass
class _Batch:
    entries: List[_Entry] = field(default_factory=list)


class EventBatcher:
    """Thread-safe; `enqueue` may be called from any thread."""

    def __init__(
        self,
        send: BatchSender,
        *,
        max_batch_size: int = 1000,
        flush_interval: float = 1.0,
        max_buffered_events: int = 10_000,
        max_concurrent_batches: int = 2,
        retry_base_delay: float = 0.5,
        retry_max_delay: float = 30.0,
        on_error: Optional[ErrorHandler] = None,
    ) -> None:
        if not 1 <= max_batch_size <= 1000:
            raise ValueError("max_batch_size must be an integer in 1..1000")
        if max_buffered_events < max_batch_size:
            raise ValueError("max_buffered_events must be at least max_batch_size")
        if max_concurrent_batches < 1:
            raise ValueError("max_concurrent_batches must be a positive integer")
        self._send = send
        self.max_batch_size = max_batch_size
        self.flush_interval = flush_interval
        self.max_buffered_events = max_buffered_events
        self.max_concurrent_batches = max_concurrent_batches
        self.retry_base_delay = retry_base_delay
        self.retry_max_delay = retry_max_delay
        self.on_error = on_error
        self.stats = BatcherStats()
        self._cond = threading.Condition()
        self._buffer: Deque[_Entry] = deque()
        self._batches: List[_Batch] = []
        self._seq = 0
        self._drain_through = 0
        self._closed = False
        self._stopped = threading.Event()
        self._workers: List[threading.Thread] = []

    @property
    def pending(self) -> int:
        """Events buffered and in flight."""
        with self._cond:
            return self._held()

    @property
    def closed(self) -> bool:
        return self._closed

    def enqueue(self, event: Mapping[str, Any], timeout: Optional[float] = None) -> str:
        """Buffers one event and returns its `event_id` (given or generated); while the batcher
        is full it blocks until room frees (or raises TimeoutError after `timeout` seconds)."""
        queued = with_event_id(event)
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            if self._closed:
                raise BatcherClosedError()
            while self._held() >= self.max_buffered_events:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise TimeoutError("No room in the event batcher")
                self._cond.wait(left)
                if self._closed:
                    raise BatcherClosedError()
            self._seq += 1
            self.stats.enqueued += 1
            self._buffer.append(_Entry(self._seq, queued, time.monotonic()))
            self._start_workers()
            self._cond.notify_all()
        return str(queued["event_id"])

    def flush(self, timeout: Optional[float] = None) -> None:
        """Returns once every event enqueued before this call is accepted or refused for good."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            target = self._seq
            self._drain_through = max(self._drain_through, target)
            self._cond.notify_all()
            while self._unsettled_through(target) > 0:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise FlushTimeoutError(timeout or 0, self._unsettled_through(target))
                self._cond.wait(left)

    def close(self, timeout: Optional[float] = None) -> None:
        """Refuses new events, then flushes: nothing enqueued before is lost. When `timeout`
        passes first, it stops sending and raises a FlushTimeoutError holding the unsent events."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        try:
            self.flush(timeout)
        except FlushTimeoutError:
            with self._cond:
                self._stopped.set()
                unsent = [e.event for e in self._buffer] + [e.event for b in self._batches for e in b.entries]
                self._buffer.clear()
                self._batches.clear()
                self._cond.notify_all()
            raise FlushTimeoutError(timeout or 0, len(unsent), unsent) from None
        with self._cond:
            self._stopped.set()
            self._cond.notify_all()

    def _held(self) -> int:
        return len(self._buffer) + sum(len(b.entries) for b in self._batches)

    def _unsettled_through(self, target: int) -> int:
        count = sum(1 for e in self._buffer if e.seq <= target)
        return count + sum(1 for b in self._batches for e in b.entries if e.seq <= target)

    def _start_workers(self) -> None:
        while len(self._workers) < self.max_concurrent_batches:
            worker = threading.Thread(target=self._work, name=f"billstream-events-{len(self._workers) + 1}", daemon=True)
            self._workers.append(worker)
            worker.start()

    def _next_batch(self) -> Optional[_Batch]:
        """Waits (holding the condition) for a batch that may leave; None when stopped."""
        while not self._stopped.is_set():
            if self._buffer:
                oldest = self._buffer[0]
                wait = oldest.at + self.flush_interval - time.monotonic()
                due = len(self._buffer) >= self.max_batch_size or oldest.seq <= self._drain_through or self._closed or wait <= 0
                if due:
                    batch = _Batch([self._buffer.popleft() for _ in range(min(self.max_batch_size, len(self._buffer)))])
                    self._batches.append(batch)
                    self.stats.batches += 1
                    return batch
                self._cond.wait(wait)
            else:
                self._cond.wait()
        return None

    def _work(self) -> None:
        while True:
            with self._cond:
                batch = self._next_batch()
            if batch is None:
                return
            self._deliver(batch, list(batch.entries))
            with self._cond:
                if batch in self._batches:
                    self._batches.remove(batch)
                self._cond.notify_all()

    def _deliver(self, batch: _Batch, entries: List[_Entry]) -> None:
        attempt = 0
        while entries and not self._stopped.is_set():
            attempt += 1
            try:
                self._send([e.event for e in entries])
            except Exception as err:  # a BillstreamError, or anything else the sender raised
                if self._stopped.is_set():
                    return
                error = err if isinstance(err, BillstreamError) else BillstreamError(0, "network_error", repr(err))
                index = (error.details or {}).get("index")
                if _passing(error):
                    self._tell(error, entries, attempt, True)
                    with self._cond:
                        self.stats.retries += 1
                    ceiling = min(self.retry_max_delay, self.retry_base_delay * 2 ** (attempt - 1))
                    named = float(error.retry_after_seconds or 0)
                    self._stopped.wait(max(named, random.uniform(0, ceiling)))
                elif isinstance(index, int) and 0 <= index < len(entries) and len(entries) > 1:
                    # One bad event refuses the whole request: let it go, send the others again.
                    bad = entries[index]
                    entries = entries[:index] + entries[index + 1 :]
                    self._refuse(error, batch, [bad], attempt)
                elif error.status == 413 and len(entries) > 1:
                    # Over the body limit with no event to blame: each half goes on its own.
                    half = (len(entries) + 1) // 2
                    self._deliver(batch, entries[:half])
                    self._deliver(batch, entries[half:])
                    return
                else:
                    self._refuse(error, batch, entries, attempt)
                    return
            else:
                with self._cond:
                    self.stats.sent += len(entries)
                    self._settle(batch, entries)
                return

    def _settle(self, batch: _Batch, entries: List[_Entry]) -> None:
        done = {id(e) for e in entries}
        batch.entries = [e for e in batch.entries if id(e) not in done]
        self._cond.notify_all()

    def _refuse(self, error: BillstreamError, batch: _Batch, entries: List[_Entry], attempt: int) -> None:
        with self._cond:
            self.stats.refused += len(entries)
            self._settle(batch, entries)
        self._tell(error, entries, attempt, False)

    def _tell(self, error: BillstreamError, entries: List[_Entry], attempt: int, will_retry: bool) -> None:
        if self.on_error is not None:
            self.on_error(error, [e.event for e in entries], attempt, will_retry)
        elif not will_retry:
            log.warning("billstream: %d usage event(s) refused for good: %s", len(entries), error)


def _passing(error: BillstreamError) -> bool:
    """No answer, a rate limit, or a server that could not do it now: the same batch may succeed later."""
    return error.status in (0, 408, 429) or error.status >= 500
