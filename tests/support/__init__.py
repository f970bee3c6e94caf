"""What the suites share: people and agents that drive a hub, waiting with a deadline, a clock
that moves when told, and databases migrated once per test session."""
