"""Hosted engines: Codex, Pi and Claude Code run as long-lived subprocesses behind one
interface (:mod:`lineup.engines.runtime`), each session a LineUp agent."""
