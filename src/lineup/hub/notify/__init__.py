"""Reaching people when an agent waits for them or fails: Web Push, email, and the
preferences that choose between them. The worker turns committed events into notifications
exactly once per person, channel and device, and records every delivery attempt."""

from lineup.hub.notify.worker import NotificationWorker

__all__ = ["NotificationWorker"]
