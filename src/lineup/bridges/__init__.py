"""Bridges from other agent ecosystems to LineUp: each one makes an agent of another
framework appear in LineUp as an agent built on the SDK would."""
