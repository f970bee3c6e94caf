"""Relay mode: the agent and the app both connect outward to an IM deployment.

:mod:`lineup.relay.wukongim` speaks WuKongIM's binary protocol: a pure codec and cipher, and
an asyncio client over TCP or WebSocket around them.
"""
