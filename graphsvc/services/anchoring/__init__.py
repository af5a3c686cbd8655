"""Anchoring: the lease (lease.py), the batch state machine (batches.py) and the proofs (proofs.py),
behind AnchoringService (service.py)."""

from graphsvc.services.anchoring.ports import Chain, Clock
from graphsvc.services.anchoring.service import AnchoringService, State

__all__ = ["AnchoringService", "Chain", "Clock", "State"]
