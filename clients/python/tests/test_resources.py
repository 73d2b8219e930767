"""Every resource family once, through the generated methods, on the real API."""
from __future__ import annotations

import asyncio
import unittest

from billstream import AsyncBillstream, BillstreamError
from tests.support import client, event_count, server, unique, usage, wait_for


class ResourcesTest(unittest.TestCase):
    def setUp(self) -> None:
        self.api = client()

    def test_customers_wallets_and_errors(self) -> None:
        external = unique("py-cust")
        customer = self.api.create_customer({"external_customer_id": external, "name": "Acme Corp", "email": "billing@acme.example"})
        self.assertEqual(customer["external_id"], external)
        self.assertEqual(self.api.get_customer(customer["id"])["name"], "Acme Corp")
        self.assertEqual(self.api.get_customer_by_external_id(external)["id"], customer["id"])
        page = self.api.list_customers(query={"external_ids": [external, "nobody"], "limit": 5})
        self.assertEqual([c["id"] for c in page["items"]], [customer["id"]])
        self.assertEqual(self.api.update_customer(customer["id"], {"name": "Acme Corporation"})["name"], "Acme Corporation")

        wallet = self.api.create_wallet({"customer_id": customer["id"], "currency": "usd", "initial_credits_to_load": "500"})
        self.assertEqual(self.api.get_wallet_balance(wallet["id"])["credit_balance"], "500")
        topup = self.api.topup_wallet(wallet["id"], {"credits_to_add": "10"})
        debit = self.api.debit_wallet(wallet["id"], {"credits": "2"})
        # Keyed by the client before the first attempt: a UUID each.
        self.assertRegex(topup["idempotency_key"] or "", r"^[0-9a-f-]{36}$")
        self.assertNotEqual(topup["idempotency_key"], debit["idempotency_key"])
        first = self.api.debit_wallet(wallet["id"], {"credits": "3", "idempotency_key": "py-order-1"})
        again = self.api.debit_wallet(wallet["id"], {"credits": "3", "idempotency_key": "py-order-1"})
        self.assertEqual(again["id"], first["id"])
        self.assertEqual(self.api.get_wallet_balance(wallet["id"])["credit_balance"], "505")
        self.assertGreaterEqual(len(self.api.list_wallet_transactions(wallet["id"])["items"]), 4)

        with self.assertRaises(BillstreamError) as bad:
            self.api.create_customer({"external_customer_id": unique("bad"), "email": "not-an-address"})
        self.assertEqual((bad.exception.status, bad.exception.internal_error, bad.exception.field), (400, "validation_error", "email"))
        self.assertRegex(bad.exception.request_id or "", r"^[0-9a-f-]{36}$")
        with self.assertRaises(BillstreamError) as missing:
            self.api.get_wallet("wallet_01JDQ8Z6Y4K2M9N3P5R7T9V1X3", request_id="py-test-404")
        self.assertEqual((missing.exception.status, missing.exception.internal_error, missing.exception.request_id), (404, "not_found", "py-test-404"))
        with self.assertRaises(BillstreamError) as conflict:
            self.api.debit_wallet(wallet["id"], {"credits": "4", "idempotency_key": "py-order-1"})
        self.assertEqual(conflict.exception.internal_error, "idempotency_conflict")
        gone = self.api.create_customer({"external_customer_id": unique("gone")})
        self.api.delete_customer(gone["id"])
        with self.assertRaises(BillstreamError) as deleted:
            self.api.get_customer(gone["id"])
        self.assertEqual(deleted.exception.status, 404)

    def test_events_and_meters(self) -> None:
        customer = unique("py-events")
        accepted = self.api.ingest_event(usage(customer, 5))
        self.assertRegex(accepted["event_id"], r"^[0-9a-f-]{36}$")
        self.api.ingest_events_bulk({"events": [usage(customer, 1), usage(customer, 2)]})
        with self.assertRaises(BillstreamError) as bad:
            self.api.ingest_events_bulk({"events": [usage(customer, 1), {**usage(customer, 2), "timestamp": "yesterday"}]})
        self.assertEqual(((bad.exception.details or {}).get("index"), bad.exception.status), (1, 400))
        self.assertIsInstance(bad.exception.hint, str)
        wait_for(lambda: event_count(self.api, customer) == 3, "3 events stored")
        meter = self.api.create_meter({"name": unique("Tokens"), "event_name": "tokens", "aggregation": {"type": "SUM", "field": "tokens"}})
        self.assertEqual(self.api.get_meter(meter["id"])["event_name"], "tokens")
        self.assertIn(meter["id"], [m["id"] for m in self.api.list_meters(query={"limit": 100})["items"]])
        self.assertIn("total_events", self.api.event_monitoring())

    def test_plans_subscriptions_invoices_payments_credit_notes(self) -> None:
        plan = self.api.create_plan(
            {
                "name": unique("Py plan"),
                "prices": [{"type": "FIXED", "currency": "usd", "amount": "10", "billing_model": "FLAT_FEE", "billing_period": "MONTHLY", "invoice_cadence": "ADVANCE"}],
            }
        )
        self.assertEqual(self.api.get_plan(plan["id"])["prices"][0]["amount"], "10")
        customer = self.api.create_customer({"external_customer_id": unique("py-sub")})
        subscription = self.api.create_subscription({"customer_id": customer["id"], "plan_id": plan["id"]})
        self.assertEqual(self.api.get_subscription(subscription["id"])["plan_id"], plan["id"])
        invoices = self.api.list_invoices(query={"subscription_id": subscription["id"]})["items"]
        invoice = self.api.finalize_invoice(invoices[0]["id"])
        self.assertEqual(invoice["status"], "finalized")
        payment = self.api.create_payment({"invoice_id": invoice["id"], "amount": 1000, "payment_method_type": "OFFLINE"})
        self.assertEqual(payment["invoice_id"], invoice["id"])
        self.assertIn(payment["id"], [p["id"] for p in self.api.list_payments(query={"invoice_id": invoice["id"]})["items"]])
        note = self.api.create_credit_note({"invoice_id": invoice["id"], "reason": "DUPLICATE", "amount": 250, "refund": "OFFLINE"})
        self.assertEqual(self.api.get_credit_note(note["id"])["invoice_id"], invoice["id"])
        self.assertIn(note["id"], [n["id"] for n in self.api.list_credit_notes(query={"invoice_id": invoice["id"]})["items"]])
        with self.assertRaises(BillstreamError) as refunded:  # money went back: it stays
            self.api.void_credit_note(note["id"])
        self.assertEqual((refunded.exception.status, refunded.exception.internal_error), (400, "validation_error"))
        self.assertEqual(self.api.get_invoice(invoice["id"])["id"], invoice["id"])

    def test_coupons_credit_grants_and_tasks(self) -> None:
        code = unique("PY").upper().replace("-", "")
        coupon = self.api.create_coupon({"name": "Launch offer", "code": code, "type": "PERCENTAGE", "percent_off": "20", "duration": "FOREVER"})
        self.assertEqual(self.api.get_coupon(coupon["id"])["code"], code)
        self.assertIn(coupon["id"], [c["id"] for c in self.api.list_coupons(query={"code": code})["items"]])
        plan = self.api.create_plan({"name": unique("Py granted")})
        grant = self.api.create_credit_grant({"plan_id": plan["id"], "name": "Included", "credits": "100", "cadence": "ONETIME"})
        self.assertEqual(self.api.get_credit_grant(grant["id"])["credits"], "100")
        self.api.archive_credit_grant(grant["id"])
        self.assertEqual(self.api.get_credit_grant(grant["id"])["status"], "archived")
        task = self.api.create_export_task({"task_type": "EXPORT", "entity_type": "CUSTOMERS", "file_type": "CSV"})
        done = wait_for(lambda: (lambda t: t if t["task_status"] in ("COMPLETED", "FAILED") else None)(self.api.get_task(task["id"])), "the export task")
        self.assertEqual(done["task_status"], "COMPLETED")
        self.assertIsInstance(self.api.download_task(task["id"]), bytes)

    def test_the_asyncio_client(self) -> None:
        base_url, api_key = server()

        async def main() -> None:
            async with AsyncBillstream(base_url, api_key) as api:
                external = unique("py-async")
                created = await api.create_customer({"external_customer_id": external})
                found, listed = await asyncio.gather(api.get_customer(created["id"]), api.list_customers(query={"external_id": external}))
                self.assertEqual(found["id"], created["id"])
                self.assertEqual([c["id"] for c in listed["items"]], [created["id"]])
                ids = [await api.events.enqueue(usage(external, n)) for n in range(20)]
                await api.events.flush()
                self.assertEqual(len(set(ids)), 20)
                self.assertEqual(api.events.stats.sent, 20)
                with self.assertRaises(BillstreamError):
                    await api.get_customer("cust_nobody")

        asyncio.run(main())


if __name__ == "__main__":
    unittest.main()
