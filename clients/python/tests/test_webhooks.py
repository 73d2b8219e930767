"""verify_webhook on real deliveries of the API to a receiver on 127.0.0.1, and unit cases."""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, List, Tuple

from billstream import WebhookVerificationError, is_test_payload, parse_webhook, verify_webhook
from tests.support import client, unique, wait_for


class Receiver:
    """A real HTTP server that keeps each request's raw bytes and headers."""

    def __init__(self) -> None:
        self.received: List[Tuple[bytes, Any]] = []
        received = self.received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                received.append((body, self.headers))
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class WebhookDeliveryTest(unittest.TestCase):
    def test_a_real_signed_delivery_is_verified_and_a_tampered_one_refused(self) -> None:
        api = client()
        receiver = Receiver()
        self.addCleanup(receiver.close)
        endpoint = api.create_webhook_endpoint({"url": receiver.url, "events": ["customer.created"]})
        delivery = api.test_webhook_endpoint(endpoint["id"], {"event_name": "customer.created"})
        self.assertEqual(delivery["status"], "succeeded")
        body, headers = receiver.received[0]
        self.assertTrue(verify_webhook(body, headers, endpoint["secret"]))
        self.assertTrue(is_test_payload(parse_webhook(body, headers, endpoint["secret"])["payload"]))

        customer = api.create_customer({"external_customer_id": unique("py-hooked")})
        body, headers = wait_for(lambda: next((r for r in receiver.received if customer["id"].encode() in r[0]), None), "customer.created")
        self.assertTrue(verify_webhook(body, headers, endpoint["secret"], tolerance_seconds=60))
        envelope = parse_webhook(body, headers, endpoint["secret"])
        self.assertEqual(envelope["event_name"], "customer.created")
        self.assertEqual(envelope["payload"]["customer"]["id"], customer["id"])

        tampered = body.replace(customer["id"].encode(), b"cust_someone_else")
        self.assertFalse(verify_webhook(tampered, headers, endpoint["secret"]))
        with self.assertRaises(WebhookVerificationError) as refused:
            parse_webhook(tampered, headers, endpoint["secret"])
        self.assertEqual(refused.exception.reason, "bad_signature")
        other_secret = "whsec_" + base64.b64encode(bytes([7] * 24)).decode()
        self.assertFalse(verify_webhook(body, headers, other_secret))
        # Replayed ten minutes later: outside the tolerance, and a moved timestamp breaks the signature.
        later = time.time() + 600
        self.assertFalse(verify_webhook(body, headers, endpoint["secret"], now=later))
        moved = {k: v for k, v in headers.items()}
        moved["webhook-timestamp"] = str(int(later))
        with self.assertRaises(WebhookVerificationError) as replay:
            parse_webhook(body, moved, endpoint["secret"], now=later)
        self.assertEqual(replay.exception.reason, "bad_signature")


def sign(secret: str, webhook_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    key = base64.b64decode(secret[len("whsec_") :])
    standard = base64.b64encode(hmac.new(key, f"{webhook_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()).decode()
    return {
        "Webhook-Id": webhook_id,
        "Webhook-Timestamp": str(timestamp),
        "Webhook-Signature": f"v1,bm90IGl0 v1,{standard}",
        "X-Billstream-Signature": hmac.new(secret.encode(), body, hashlib.sha256).hexdigest(),
    }


class VerifyUnitTest(unittest.TestCase):
    secret = "whsec_" + base64.b64encode(b"0123456789abcdef0123").decode()

    def test_reasons(self) -> None:
        body = json.dumps({"id": "msg_1", "event_name": "customer.created", "payload": {}}).encode()
        now = int(time.time())
        headers = sign(self.secret, "msg_1", now, body)
        self.assertTrue(verify_webhook(body, headers, self.secret))
        self.assertTrue(verify_webhook(body, list(headers.items()), self.secret))

        def reason(*args: Any, **kwargs: Any) -> str:
            try:
                parse_webhook(*args, **kwargs)
            except WebhookVerificationError as err:
                return err.reason
            return "accepted"

        self.assertEqual(reason(body, {k: v for k, v in headers.items() if k != "Webhook-Signature"}, self.secret), "missing_header")
        self.assertEqual(reason(body, headers, "not-a-secret"), "bad_secret")
        self.assertEqual(reason(body + b" ", headers, self.secret), "bad_signature")
        self.assertEqual(reason(body, headers, self.secret, now=now + 301), "timestamp_out_of_tolerance")
        other = json.dumps({"id": "msg_2"}).encode()
        self.assertEqual(reason(other, sign(self.secret, "msg_1", now, other), self.secret), "bad_body")
        with self.assertRaises(TypeError):
            verify_webhook(body.decode(), headers, self.secret)  # type: ignore[arg-type]


if __name__ == "__main__":
    unittest.main()
