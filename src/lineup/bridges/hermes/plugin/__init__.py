"""The LineUp platform plugin for Hermes Agent: the adapter lives in the ``lineup`` package
(installed in Hermes's environment); this directory is what Hermes discovers."""

from lineup.bridges.hermes import register

__all__ = ["register"]
