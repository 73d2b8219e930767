"""Reservations (docs/api/reservations.md): hold credits of a PRE_PAID wallet before the work
starts, commit what it cost, release what it did not use. `with_reservation` runs the pattern
for metered work such as an LLM call: reserve the maximum, do the work, commit the actual; an
error of the work (or a commit the API refuses) releases the hold and is raised again."""
from __future__ import annotations

from typing import Any, Awaitable, Callable, Dict, Optional, Tuple, TypedDict, TypeVar, Union, cast

from ._operations import AsyncOperations, SyncOperations
from ._types import CommitReservationBody, CommitReservationResponse, CreateReservationBody, CreateReservationResponse, ReleaseReservationResponse

T = TypeVar("T")


class ReserveBody(TypedDict, total=False):
    """CreateReservationBody with `idempotency_key` optional: the client fills it in (a UUID).
    A hold of credits names `currency` and `credits` or `amount`; a hold of a METERED
    hard-limit entitlement names `feature_id` and `quantity` (ADR 0070)."""

    customer_id: str
    external_customer_id: str
    currency: str
    feature_id: str
    quantity: str
    credits: str
    amount: str
    expires_in: int
    allow_overage: bool
    idempotency_key: str
    metadata: Dict[str, str]


#: What the work answers: the credits to commit (a decimal string), or (credits, its own value).
WorkResult = Union[str, Tuple[str, T]]


def _split(outcome: "WorkResult[T]") -> Tuple[str, Optional[T]]:
    if isinstance(outcome, str):
        return outcome, None
    return outcome[0], outcome[1]


def _commit_body(credits: str, allow_overage: Optional[bool]) -> CommitReservationBody:
    body: CommitReservationBody = {"credits": credits}
    if allow_overage is not None:
        body["allow_overage"] = allow_overage
    return body


class SyncReservations(SyncOperations):
    """`reserve`, `commit`, `release` and `with_reservation` of the blocking client."""

    def reserve(self, body: ReserveBody, **options: Any) -> CreateReservationResponse:
        """POST /v1/reservations (keyed by the client unless `idempotency_key` is given); 402
        `insufficient_credits` (BillstreamError, `details["available"]`) when credits fall short."""
        return self.create_reservation(cast(CreateReservationBody, body), **options)

    def commit(self, id: str, credits: str, *, allow_overage: Optional[bool] = None, **options: Any) -> CommitReservationResponse:
        """One debit of `credits`, the rest released; the same commit again answers it unchanged."""
        return self.commit_reservation(id, _commit_body(credits, allow_overage), **options)

    def release(self, id: str, **options: Any) -> ReleaseReservationResponse:
        """The hold released whole."""
        return self.release_reservation(id, {}, **options)

    def with_reservation(self, body: ReserveBody, work: Callable[[CreateReservationResponse], "WorkResult[T]"]) -> Tuple[CommitReservationResponse, Optional[T]]:
        """Reserves, runs `work`, commits the credits it answers; gives (committed reservation, value)."""
        held = self.reserve(body)
        try:
            credits, value = _split(work(held))
            return self.commit(held["id"], credits), value
        except BaseException:
            try:
                self.release(held["id"])
            except Exception:  # noqa: BLE001 - the hold's expiry takes it; the first error matters
                pass
            raise


class AsyncReservations(AsyncOperations):
    """The same calls as coroutines, for `AsyncBillstream`."""

    async def reserve(self, body: ReserveBody, **options: Any) -> CreateReservationResponse:
        return await self.create_reservation(cast(CreateReservationBody, body), **options)

    async def commit(self, id: str, credits: str, *, allow_overage: Optional[bool] = None, **options: Any) -> CommitReservationResponse:
        return await self.commit_reservation(id, _commit_body(credits, allow_overage), **options)

    async def release(self, id: str, **options: Any) -> ReleaseReservationResponse:
        return await self.release_reservation(id, {}, **options)

    async def with_reservation(
        self, body: ReserveBody, work: Callable[[CreateReservationResponse], Awaitable["WorkResult[T]"]]
    ) -> Tuple[CommitReservationResponse, Optional[T]]:
        held = await self.reserve(body)
        try:
            credits, value = _split(await work(held))
            return await self.commit(held["id"], credits), value
        except BaseException:
            try:
                await self.release(held["id"])
            except Exception:  # noqa: BLE001
                pass
            raise
