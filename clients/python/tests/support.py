"""What the suites share: the server the test harness started (test-e2e/integration/client/
python-client.int.test.ts sets BILLSTREAM_TEST_BASE_URL, BILLSTREAM_TEST_API_KEY and
BILLSTREAM_TEST_CONTROL_URL), a client on it, and waiting for a condition."""
from __future__ import annotations

import os
import time
import unittest
import urllib.request
import uuid
from typing import Any, Callable, Dict, Optional, TypeVar

from billstream import Billstream, RetryPolicy
from billstream.types import IngestEventBody

T = TypeVar("T")
FAST = RetryPolicy(max_attempts=4, base_delay=0.02, max_delay=0.2)


def server() -> tuple[str, str]:
    base_url = os.environ.get("BILLSTREAM_TEST_BASE_URL")
    api_key = os.environ.get("BILLSTREAM_TEST_API_KEY")
    if not base_url or not api_key:
        raise unittest.SkipTest("no Billstream to test against: set BILLSTREAM_TEST_BASE_URL and BILLSTREAM_TEST_API_KEY (npm test does)")
    return base_url, api_key


def client(**options: Any) -> Billstream:
    base_url, api_key = server()
    options.setdefault("retry", FAST)
    return Billstream(base_url, api_key, **options)


def control(action: str) -> None:
    """Stops or starts the embedded default of the harness (same port, same DATA_DIR)."""
    url = os.environ.get("BILLSTREAM_TEST_CONTROL_URL")
    if not url:
        raise unittest.SkipTest("no control listener: BILLSTREAM_TEST_CONTROL_URL is unset")
    urllib.request.urlopen(urllib.request.Request(f"{url}/{action}", method="POST", data=b""), timeout=60).close()


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def wait_for(check: Callable[[], Optional[T]], what: str, timeout: float = 20.0, every: float = 0.1) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(every)


def usage(customer: str, n: int) -> IngestEventBody:
    return {
        "event_name": "tokens",
        "external_customer_id": customer,
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "properties": {"tokens": n},
    }


def event_count(api: Billstream, customer: str) -> int:
    return api.query_events({"external_customer_id": customer, "page_size": 1})["total_count"]
