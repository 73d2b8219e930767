"""reserve, commit, release and with_reservation on the real API."""
from __future__ import annotations

import asyncio
import unittest
from typing import Tuple

from billstream import AsyncBillstream, BillstreamError
from billstream.types import CreateReservationResponse
from tests.support import client, server, unique


class ReservationsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.api = client()

    def wallet(self, credits: str) -> Tuple[str, str]:
        customer = self.api.create_customer({"external_customer_id": unique("py-resv")})
        wallet = self.api.create_wallet({"customer_id": customer["id"], "currency": "usd", "initial_credits_to_load": credits})
        return wallet["id"], customer["id"]

    def test_reserve_commit_release(self) -> None:
        wallet_id, customer_id = self.wallet("10")
        held = self.api.reserve({"customer_id": customer_id, "currency": "usd", "credits": "4"})
        self.assertEqual((held["status"], held["credits_held"]), ("held", "4"))
        self.assertRegex(held["idempotency_key"], r"^[0-9a-f-]{36}$")
        committed = self.api.commit(held["id"], "2.5")
        self.assertEqual((committed["status"], committed["credits_committed"]), ("committed", "2.5"))
        self.assertEqual(self.api.commit(held["id"], "2.5"), committed)
        other = self.api.reserve({"customer_id": customer_id, "currency": "usd", "credits": "1"})
        self.assertEqual(self.api.release(other["id"])["status"], "released")
        balance = self.api.get_wallet_balance(wallet_id)
        self.assertEqual((balance["credit_balance"], balance.get("credits_held"), balance.get("credits_available")), ("7.5", "0", "7.5"))
        with self.assertRaises(BillstreamError) as short:
            self.api.reserve({"customer_id": customer_id, "currency": "usd", "credits": "8"})
        self.assertEqual((short.exception.status, short.exception.internal_error, (short.exception.details or {}).get("available")), (402, "insufficient_credits", "7.5"))

    def test_with_reservation_commits_the_actual_and_releases_on_error(self) -> None:
        wallet_id, customer_id = self.wallet("100")

        def llm_call(r: CreateReservationResponse) -> Tuple[str, str]:
            self.assertEqual(self.api.get_wallet_balance(wallet_id).get("credits_held"), "40")
            return "12.75", "the completion"

        reservation, value = self.api.with_reservation({"customer_id": customer_id, "currency": "usd", "credits": "40"}, llm_call)
        self.assertEqual((reservation["status"], reservation["credits_committed"], value), ("committed", "12.75", "the completion"))
        seen: list[str] = []

        def failing(r: CreateReservationResponse) -> str:
            seen.append(r["id"])
            raise TimeoutError("the model timed out")

        with self.assertRaises(TimeoutError):
            self.api.with_reservation({"customer_id": customer_id, "currency": "usd", "credits": "30"}, failing)
        self.assertEqual(self.api.get_reservation(seen[0])["status"], "released")
        self.assertEqual(self.api.get_wallet_balance(wallet_id)["credit_balance"], "87.25")

    def test_async_with_reservation(self) -> None:
        wallet_id, customer_id = self.wallet("10")
        base_url, api_key = server()

        async def main() -> str:
            api = AsyncBillstream(base_url, api_key)

            async def work(r: CreateReservationResponse) -> str:
                return "3"

            reservation, _ = await api.with_reservation({"customer_id": customer_id, "currency": "usd", "credits": "5"}, work)
            return reservation["credits_committed"] or ""

        self.assertEqual(asyncio.run(main()), "3")
        self.assertEqual(self.api.get_wallet_balance(wallet_id)["credit_balance"], "7")


if __name__ == "__main__":
    unittest.main()
