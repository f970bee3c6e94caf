"""Governed actions: the hub's side of ``lineup.core`` (seed 003 §1, §5).

Every capability call from an agent goes through :func:`invoke.invoke`: schema, policy, a
read at once or a write's draft and confirm card; a person's decision (``decisions``) yields a
one-time grant and an execution recorded before its provider is called (``executor``); every
step is a fact in the workspace's log and an entry in the audit chain.
"""

from lineup.hub.governance.catalogue import Catalogue, CatalogueEntry
from lineup.hub.governance.service import Governance

__all__ = ["Catalogue", "CatalogueEntry", "Governance"]
