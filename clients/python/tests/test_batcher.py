"""The usage event batcher on the real API: back pressure, a bad event refused alone, a
restart of the server mid-stream with every event stored exactly once, and a flush at exit."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import unittest
from typing import Any, Dict, List

from billstream import BatcherClosedError, BillstreamError
from tests.support import client, control, event_count, server, unique, usage, wait_for


class BatcherTest(unittest.TestCase):
    def test_batches_with_back_pressure_and_refuses_only_the_bad_event(self) -> None:
        customer = unique("py-batch")
        refused: List[Dict[str, Any]] = []

        def on_error(error: BillstreamError, events: List[Dict[str, Any]], attempt: int, will_retry: bool) -> None:
            if not will_retry:
                refused.extend({"id": e["event_id"], "field": error.field} for e in events)

        api = client(events={"max_batch_size": 500, "flush_interval": 0.05, "max_buffered_events": 1500, "on_error": on_error})
        most = 0
        ids = []
        for n in range(3000):
            ids.append(api.events.enqueue(usage(customer, n)))
            most = max(most, api.events.pending)
            if n == 1500:
                api.events.enqueue({**usage(customer, -1), "event_id": "py-bad-one", "timestamp": "not a time"})
        api.close()
        self.assertEqual(len(set(ids)), 3000)
        self.assertLessEqual(most, 1500)
        self.assertEqual(len(refused), 1)
        self.assertEqual(refused[0]["id"], "py-bad-one")
        self.assertTrue(str(refused[0]["field"]).endswith("timestamp"))
        stats = api.events.stats
        self.assertEqual((stats.enqueued, stats.sent, stats.refused), (3001, 3000, 1))
        self.assertGreaterEqual(stats.batches, 6)
        wait_for(lambda: event_count(api, customer) == 3000, "3,000 events stored", timeout=30)
        with self.assertRaises(BatcherClosedError):
            api.events.enqueue(usage(customer, 0))

    def test_a_restart_of_the_server_loses_nothing_and_stores_nothing_twice(self) -> None:
        customer = unique("py-restart")
        failures: List[BillstreamError] = []
        api = client(
            events={
                "max_batch_size": 200,
                "flush_interval": 0.02,
                "max_buffered_events": 5000,
                "retry_base_delay": 0.05,
                "retry_max_delay": 0.3,
                "on_error": lambda error, events, attempt, will_retry: failures.append(error) if will_retry else None,
            }
        )
        for n in range(1000):
            api.events.enqueue(usage(customer, n))
        stopping = threading.Thread(target=control, args=("stop",))
        stopping.start()  # batches may be in flight: the gateway finishes or drops them
        for n in range(1000, 1500):
            api.events.enqueue(usage(customer, n))
        stopping.join()
        for n in range(1500, 2000):
            api.events.enqueue(usage(customer, n))
        wait_for(lambda: any(f.status == 0 for f in failures), "a batch to fail while the server is down", timeout=10)
        self.assertGreater(api.events.pending, 0)
        control("start")
        api.close(timeout=60)
        stats = api.events.stats
        self.assertEqual((stats.enqueued, stats.sent, stats.refused), (2000, 2000, 0))
        self.assertGreater(stats.retries, 0)
        wait_for(lambda: event_count(api, customer) == 2000, "2,000 events stored once", timeout=30)
        time.sleep(0.5)
        self.assertEqual(event_count(api, customer), 2000)

    def test_events_still_buffered_at_exit_are_sent(self) -> None:
        base_url, api_key = server()
        customer = unique("py-exit")
        script = (
            "import sys, time\n"
            "from billstream import Billstream\n"
            "api = Billstream(sys.argv[1], sys.argv[2], events={'flush_interval': 60})\n"
            "for n in range(250):\n"
            "    api.events.enqueue({'event_name': 'tokens', 'external_customer_id': sys.argv[3], 'timestamp': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()), 'properties': {'tokens': n}})\n"
            "print(api.events.pending)\n"  # nothing sent yet: the interval is a minute; exit sends them
        )
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        done = subprocess.run([sys.executable, "-c", script, base_url, api_key, customer], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.strip(), "250")
        api = client()
        wait_for(lambda: event_count(api, customer) == 250, "250 events sent at exit", timeout=30)


if __name__ == "__main__":
    unittest.main()
