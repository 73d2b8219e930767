"""The retry rules against a local server that fails on purpose (ADR 0060, the TypeScript
client's rules): a safe call (a GET, a keyed write, usage events) is retried on any 5xx, 429
after Retry-After and when no answer came, with the same idempotency key, event ids and request
id; a create without a key is never retried."""
from __future__ import annotations

import json
import socket
import struct
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Tuple

from billstream import Billstream, BillstreamError, RetryInfo, RetryPolicy

Reply = Tuple[int, Dict[str, str], Dict[str, Any]]
RESET: Reply = (-1, {}, {})
OK: Reply = (200, {}, {"id": "thing_1", "items": []})


class FailingServer:
    """Answers each request with the next planned reply (-1: the connection is reset)."""

    def __init__(self, plan: List[Reply]) -> None:
        self.plan = list(plan)
        self.requests: List[Dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def handle_one(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.requests.append({"method": self.command, "path": self.path, "headers": dict(self.headers), "body": json.loads(raw) if raw else None})
                status, headers, body = outer.plan.pop(0) if outer.plan else OK
                if status == -1:
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.close_connection = True
                    self.connection.close()
                    return
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("X-Request-Id", self.headers.get("X-Request-Id", ""))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = handle_one

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def envelope(code: str, message: str = "try again") -> Dict[str, Any]:
    return {"success": False, "error": {"message": message, "internal_error": code, "details": {"field": "x"}}}


class RetryTest(unittest.TestCase):
    def serve(self, plan: List[Reply]) -> Tuple[FailingServer, Billstream, List[RetryInfo]]:
        server = FailingServer(plan)
        self.addCleanup(server.close)
        retries: List[RetryInfo] = []
        api = Billstream(server.url, "key", retry=RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.05), on_retry=retries.append)
        return server, api, retries

    def test_a_keyed_debit_is_retried_through_503_and_a_reset_with_the_same_key(self) -> None:
        server, api, retries = self.serve([(503, {}, envelope("service_unavailable")), RESET, OK])
        api.debit_wallet("wallet_1", {"credits": "5"})
        self.assertEqual(len(server.requests), 3)
        keys = {r["body"]["idempotency_key"] for r in server.requests}
        self.assertEqual(len(keys), 1)
        self.assertRegex(keys.pop(), r"^[0-9a-f-]{36}$")
        self.assertEqual(len({r["headers"]["X-Request-Id"] for r in server.requests}), 1)
        self.assertEqual([r.error.status for r in retries], [503, 0])
        self.assertEqual(retries[1].error.internal_error, "network_error")

    def test_the_callers_idempotency_key_header_is_the_body_key(self) -> None:
        server, api, _ = self.serve([OK])
        api.topup_wallet("wallet_1", {"credits_to_add": "1"}, headers={"Idempotency-Key": "order-43"})
        self.assertEqual(server.requests[0]["body"]["idempotency_key"], "order-43")

    def test_429_waits_for_retry_after(self) -> None:
        server, api, retries = self.serve([(429, {"Retry-After": "1"}, envelope("service_unavailable", "rate limited")), OK])
        started = time.monotonic()
        api.list_customers()
        self.assertGreaterEqual(time.monotonic() - started, 1.0)
        self.assertEqual((retries[0].error.status, retries[0].error.retry_after_seconds), (429, 1))
        self.assertGreaterEqual(retries[0].delay, 1.0)
        self.assertEqual(len(server.requests), 2)

    def test_a_retry_after_beyond_the_limit_is_raised_at_once(self) -> None:
        server = FailingServer([(429, {"Retry-After": "120"}, envelope("service_unavailable"))])
        self.addCleanup(server.close)
        with self.assertRaises(BillstreamError) as err:
            Billstream(server.url, "key").get_customer("c1")
        self.assertEqual((err.exception.status, err.exception.attempts, err.exception.retry_after_seconds), (429, 1, 120))

    def test_a_create_without_a_key_is_never_retried(self) -> None:
        server, api, retries = self.serve([(503, {}, envelope("service_unavailable")), OK])
        with self.assertRaises(BillstreamError) as err:
            api.create_customer({"external_customer_id": "never-twice"})
        self.assertEqual((err.exception.status, err.exception.attempts, len(server.requests), retries), (503, 1, 1, []))

    def test_every_5xx_of_a_safe_call_is_retried_with_the_same_request_id(self) -> None:
        server, api, retries = self.serve([(500, {}, envelope("internal_error", "boom")), (502, {}, {}), (504, {}, {}), OK])
        self.assertEqual(api.get_customer("c1", request_id="py-req-0")["id"], "thing_1")
        self.assertEqual([r["headers"].get("X-Request-Id") for r in server.requests], ["py-req-0"] * 4)
        self.assertEqual(len(retries), 3)

    def test_a_500_that_repeats_is_raised_with_its_envelope_and_request_id(self) -> None:
        server, api, retries = self.serve([(500, {}, envelope("internal_error", "boom"))] * 5)
        with self.assertRaises(BillstreamError) as err:
            api.get_customer("c1", request_id="py-req-1")
        e = err.exception
        self.assertEqual((e.status, e.internal_error, e.message, e.field, e.request_id, e.attempts), (500, "internal_error", "boom", "x", "py-req-1", 4))
        self.assertEqual(len(server.requests), 4)

    def test_a_500_of_a_create_without_a_key_is_not_retried(self) -> None:
        server, api, retries = self.serve([(500, {}, envelope("internal_error", "boom")), OK])
        with self.assertRaises(BillstreamError) as err:
            api.create_customer({"external_customer_id": "never-twice-500"})
        self.assertEqual((err.exception.status, err.exception.attempts, len(server.requests), retries), (500, 1, 1, []))

    def test_attempts_run_out(self) -> None:
        server, api, retries = self.serve([(503, {}, envelope("service_unavailable"))] * 5)
        with self.assertRaises(BillstreamError) as err:
            api.get_customer("c1")
        self.assertEqual((err.exception.attempts, len(server.requests), len(retries)), (4, 4, 3))

    def test_the_batcher_resends_a_bulk_after_a_500_with_the_same_event_ids(self) -> None:
        server, api, _ = self.serve([(500, {}, envelope("internal_error")), (502, {}, {}), (202, {}, {"accepted": 3})])
        api = Billstream(server.url, "key", retry=RetryPolicy(max_attempts=1), events={"flush_interval": 0.01, "retry_base_delay": 0.01})
        ids = [api.events.enqueue({"event_name": "tokens", "external_customer_id": "c", "properties": {"n": n}}) for n in range(3)]
        api.close(timeout=10)
        self.assertEqual(len(server.requests), 3)
        for request in server.requests:
            self.assertEqual([e["event_id"] for e in request["body"]["events"]], ids)
        self.assertEqual((api.events.stats.sent, api.events.stats.retries, api.events.stats.refused), (3, 2, 0))

    def test_no_server_at_all(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        retries: List[RetryInfo] = []
        api = Billstream(f"http://127.0.0.1:{port}", "key", retry=RetryPolicy(max_attempts=3, base_delay=0.01), on_retry=retries.append)
        with self.assertRaises(BillstreamError) as err:
            api.list_api_keys()
        self.assertEqual((err.exception.status, err.exception.internal_error, err.exception.attempts, len(retries)), (0, "network_error", 3, 2))


if __name__ == "__main__":
    unittest.main()
