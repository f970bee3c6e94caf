"""Governance (seed 003 §1, §5): capabilities, policy, approvals bound to what they were shown,
executions that apply once, and the audit chain.

This package is pure: it decides and describes, and the hub (``lineup.hub.governance``) does
the I/O around it — the store, the providers' calls, the clock. Providers implement
:class:`~lineup.core.provider.Provider` and import nothing but this package and the protocol.
"""
