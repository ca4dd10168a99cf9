"""A test-only toolset whose effects take several steps, and one that calls a service outside the
store — through the gate's public API only (Effect, Phase, Outside), like a real toolset.

* ``ship_parcel`` (class always): step 1 packs the parcel (``parcel/<id>`` packed), step 2 ships it
  (``parcel/<id>`` shipped and a ``shipment`` doc). Each step commits on its own.
* ``charge_card`` (class always): charges an outside payments service with the card's idempotency
  key, then records the receipt in the store. The service is :data:`PAYMENTS` in process, or an
  HTTP service at ``COUNTERSIGN_TEST_PAYMENTS`` (a loopback URL) for tests that kill a server.
"""

from __future__ import annotations

import json
import os
import threading
import urllib.request

from pydantic import Field

from countersign.core.preview import Preview
from countersign.store.docs import DocWrite
from countersign.toolkit import (
    ALWAYS,
    Action,
    ActionContext,
    ActionError,
    Arguments,
    Effect,
    Outside,
    Phase,
    Plan,
    Toolset,
)

PARCEL, SHIPMENT, RECEIPT = "parcel", "shipment", "receipt"


class Payments:
    """An outside service that honours idempotency keys: the same key charges once."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.charges: dict[str, dict] = {}
        self._lock = threading.Lock()

    def charge(self, key: str, amount: int) -> dict:
        with self._lock:
            self.calls.append(key)
            if key not in self.charges:
                self.charges[key] = {"charge_id": f"ch_{len(self.charges) + 1}", "amount": amount}
            return dict(self.charges[key])


PAYMENTS = Payments()


def _charge(key: str, amount: int) -> dict:
    url = os.environ.get("COUNTERSIGN_TEST_PAYMENTS")
    if not url:
        return PAYMENTS.charge(key, amount)
    request = urllib.request.Request(url, data=json.dumps({"amount": amount}).encode(), method="POST",
                                     headers={"Idempotency-Key": key, "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:  # a loopback test service
        return json.loads(response.read())


class ParcelArgs(Arguments):
    parcel_id: str = Field(description="The parcel")


class ShipParcel(Action):
    name = "ship_parcel"
    title = "Preparing to ship a parcel"
    description = "Pack, then ship, a parcel (two steps)."
    arguments = ParcelArgs
    gate = ALWAYS

    def plan(self, args: ParcelArgs, ctx: ActionContext) -> Plan:
        doc = ctx.store.get_doc(ctx.workspace_id, PARCEL, args.parcel_id)
        if doc is None:
            raise ActionError(f"parcel_id: no parcel {args.parcel_id!r}.", field="parcel_id")
        if doc.data["state"] != "new":
            raise ActionError(f"parcel_id: the parcel is already {doc.data['state']}.", field="parcel_id")
        return Plan({"parcel": doc.id, "version": doc.version}, Preview(f"Ship parcel {doc.id}?"))

    def apply(self, plan: Plan, ctx: ActionContext) -> Effect:
        doc = ctx.store.get_doc(ctx.workspace_id, PARCEL, plan.subject["parcel"])
        assert doc is not None
        packed = dict(doc.data, state="packed")
        shipped = dict(doc.data, state="shipped")
        return Effect({"parcel": doc.id, "state": "shipped"}, (
            Phase(f"pack parcel {doc.id}", (DocWrite(PARCEL, doc.id, packed, doc.version),)),
            Phase(f"ship parcel {doc.id}", (DocWrite(PARCEL, doc.id, shipped, doc.version + 1),
                                            DocWrite(SHIPMENT, doc.id, {"parcel": doc.id}, 0)),
                  failure="The parcel changed before it shipped; it stays packed."),
        ))


class ChargeArgs(Arguments):
    order_id: str = Field(description="The order to charge for")
    amount: int = Field(gt=0, description="Cents")


class ChargeCard(Action):
    name = "charge_card"
    title = "Preparing a charge"
    description = "Charge the customer's card (an outside service), then record the receipt."
    arguments = ChargeArgs
    gate = ALWAYS

    def plan(self, args: ChargeArgs, ctx: ActionContext) -> Plan:
        if ctx.store.get_doc(ctx.workspace_id, RECEIPT, args.order_id) is not None:
            raise ActionError(f"order_id: order {args.order_id} is already paid.", field="order_id")
        return Plan({"order": args.order_id, "amount": args.amount},
                    Preview(f"Charge {args.amount / 100:.2f} for order {args.order_id}?"))

    def apply(self, plan: Plan, ctx: ActionContext) -> Effect:
        order, amount = plan.subject["order"], plan.subject["amount"]
        receipt = {"order": order, "amount": amount}
        return Effect(
            {"order": order, "amount": amount},
            (Phase(f"record the receipt of order {order}", (DocWrite(RECEIPT, order, receipt, 0),)),),
            outside=Outside(f"charge {amount / 100:.2f} to the card on file",
                            call=lambda key: _charge(key, amount)),
        )


TOOLSET = Toolset(name="stepped", actions=[ShipParcel(), ChargeCard()])


def seed_parcels(store, workspace_id: str, count: int = 3) -> list[str]:
    ids = [f"p{i}" for i in range(1, count + 1)]
    store.docs.write_docs(workspace_id, [DocWrite(PARCEL, pid, {"state": "new"}, 0) for pid in ids])
    return ids
