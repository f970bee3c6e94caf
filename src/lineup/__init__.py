"""LineUp: see and steer the AI agents you already run."""

__version__ = "0.1.0"
