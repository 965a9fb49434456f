"""The transaction-local settings that say whose rows a transaction touches: the RLS-bound
``ibex_tenant`` role with ``ibex.org_id``, or the cross-tenant ``ibex_maint`` role. Each
setting lasts until the transaction ends (``set_config(..., true)``)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

_AS_TENANT = text(
    "SELECT set_config('role', 'ibex_tenant', true), set_config('ibex.org_id', :org_id, true)"
)
_AS_MAINT = text("SELECT set_config('role', 'ibex_maint', true)")
_AS_TENANT_NOT_DURABLE = text(
    "SELECT set_config('role', 'ibex_tenant', true), set_config('ibex.org_id', :org_id, true), "
    "set_config('synchronous_commit', 'off', true)"
)
_AS_MAINT_NOT_DURABLE = text(
    "SELECT set_config('role', 'ibex_maint', true), set_config('synchronous_commit', 'off', true)"
)


def as_tenant(conn: Any, org_id: str, *, durable: bool = True) -> None:
    """Run the rest of the transaction as ``org_id``'s tenant; ``durable=False`` also lets its
    commit return before the WAL flush."""
    conn.execute(_AS_TENANT if durable else _AS_TENANT_NOT_DURABLE, {"org_id": org_id})


def as_maint(conn: Any, *, durable: bool = True) -> None:
    """Run the rest of the transaction as the cross-tenant maintenance role."""
    conn.execute(_AS_MAINT if durable else _AS_MAINT_NOT_DURABLE)
