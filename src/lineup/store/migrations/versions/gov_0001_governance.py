"""Governance: projects and their members, capabilities' states, policy rules, invocations,
approvals, standing permissions, one-time grants, executions, and the providers' sealed
credentials; conversations gain their project and their creator.

Revision ID: gov_0001_governance
Revises: 0001
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from lineup.store.jsontype import json_column_type as json

revision: str = "gov_0001_governance"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.String(64)

TABLES = (
    "projects",
    "project_members",
    "capability_states",
    "policy_rules",
    "invocations",
    "approvals",
    "standing_permissions",
    "grants",
    "executions",
    "provider_credentials",
)


def _pk(table: str, *columns: str) -> sa.PrimaryKeyConstraint:
    return sa.PrimaryKeyConstraint(*columns, name=op.f(f"pk_{table}"))


def _ws_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["workspace_id"], ["workspaces.id"], name=op.f(f"fk_{table}_workspace_id_workspaces")
    )


def upgrade() -> None:
    op.add_column("conversations", sa.Column("project_id", ID, nullable=True))
    op.add_column("conversations", sa.Column("created_by", sa.String(200), nullable=True))
    op.create_table(
        "projects",
        sa.Column("id", ID, nullable=False),
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("context", sa.Text(), nullable=True),
        sa.Column("working_directory", sa.Text(), nullable=True),
        sa.Column("created_by", ID, nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        _ws_fk("projects"),
        _pk("projects", "id"),
    )
    op.create_index(op.f("ix_projects_workspace_id"), "projects", ["workspace_id"], unique=False)
    op.create_table(
        "project_members",
        sa.Column("project_id", ID, nullable=False),
        sa.Column("user_id", ID, nullable=False),
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        _ws_fk("project_members"),
        _pk("project_members", "project_id", "user_id"),
    )
    op.create_index(
        op.f("ix_project_members_workspace_id_user_id"),
        "project_members",
        ["workspace_id", "user_id"],
        unique=False,
    )
    op.create_table(
        "capability_states",
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("capability", sa.String(100), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("updated_by", sa.String(200), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        _ws_fk("capability_states"),
        _pk("capability_states", "workspace_id", "capability"),
    )
    op.create_table(
        "policy_rules",
        sa.Column("id", ID, nullable=False),
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("project_id", ID, nullable=True),
        sa.Column("capability", sa.String(100), nullable=False),
        sa.Column("instance", sa.String(100), nullable=True),
        sa.Column("roles", json(), nullable=True),
        sa.Column("effect", sa.String(8), nullable=False),
        sa.Column("set_by", sa.String(200), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        _ws_fk("policy_rules"),
        _pk("policy_rules", "id"),
    )
    op.create_index(
        op.f("ix_policy_rules_workspace_id"), "policy_rules", ["workspace_id"], unique=False
    )
    op.create_table(
        "invocations",
        sa.Column("id", ID, nullable=False),
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("agent_id", ID, nullable=False),
        sa.Column("agent_invocation_id", sa.String(128), nullable=False),
        sa.Column("capability", sa.String(100), nullable=False),
        sa.Column("effect", sa.String(8), nullable=False),
        sa.Column("instance", sa.String(100), nullable=False),
        sa.Column("params", json(), nullable=False),
        sa.Column("params_digest", sa.String(80), nullable=False),
        sa.Column("project_id", ID, nullable=True),
        sa.Column("conversation_id", ID, nullable=True),
        sa.Column("task_id", ID, nullable=True),
        sa.Column("on_behalf_of", sa.String(200), nullable=True),
        sa.Column("status", sa.String(24), nullable=False),
        sa.Column("approval_id", ID, nullable=True),
        sa.Column("execution_id", ID, nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.Column("sequence", sa.BigInteger(), nullable=False),
        _ws_fk("invocations"),
        _pk("invocations", "id"),
    )
    op.create_index(
        op.f("ix_invocations_agent"),
        "invocations",
        ["workspace_id", "agent_id", "agent_invocation_id"],
        unique=True,
    )
    op.create_table(
        "approvals",
        sa.Column("id", ID, nullable=False),
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("project_id", ID, nullable=False),
        sa.Column("invocation_id", ID, nullable=False),
        sa.Column("agent_id", ID, nullable=False),
        sa.Column("capability", sa.String(100), nullable=False),
        sa.Column("instance", sa.String(100), nullable=False),
        sa.Column("params", json(), nullable=False),
        sa.Column("params_digest", sa.String(80), nullable=False),
        sa.Column("resource_version", sa.String(200), nullable=True),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("impact", sa.Text(), nullable=False),
        sa.Column("draft", json(), nullable=True),
        sa.Column("conversation_id", ID, nullable=True),
        sa.Column("task_id", ID, nullable=True),
        sa.Column("requested_for", sa.String(200), nullable=True),
        sa.Column("assignee", ID, nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("decided_by", sa.String(200), nullable=True),
        sa.Column("decided_by_name", sa.Text(), nullable=True),
        sa.Column("decided_at", sa.BigInteger(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("permission_id", ID, nullable=True),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.Column("sequence", sa.BigInteger(), nullable=False),
        _ws_fk("approvals"),
        _pk("approvals", "id"),
    )
    op.create_index(
        op.f("ix_approvals_status_expires_at"), "approvals", ["status", "expires_at"], unique=False
    )
    op.create_index(
        op.f("ix_approvals_workspace_id_status"),
        "approvals",
        ["workspace_id", "status"],
        unique=False,
    )
    op.create_table(
        "standing_permissions",
        sa.Column("id", ID, nullable=False),
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("project_id", ID, nullable=False),
        sa.Column("capability", sa.String(100), nullable=False),
        sa.Column("instance", sa.String(100), nullable=False),
        sa.Column("bounds", json(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=True),
        sa.Column("max_calls", sa.Integer(), nullable=True),
        sa.Column("calls_used", sa.Integer(), nullable=False),
        sa.Column("granted_by", sa.String(200), nullable=False),
        sa.Column("approval_id", ID, nullable=True),
        sa.Column("revoked_at", sa.BigInteger(), nullable=True),
        sa.Column("revoked_by", sa.String(200), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        _ws_fk("standing_permissions"),
        _pk("standing_permissions", "id"),
    )
    op.create_index(
        op.f("ix_standing_permissions_workspace_id"),
        "standing_permissions",
        ["workspace_id"],
        unique=False,
    )
    op.create_table(
        "grants",
        sa.Column("id", ID, nullable=False),
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("invocation_id", ID, nullable=False),
        sa.Column("approval_id", ID, nullable=True),
        sa.Column("permission_id", ID, nullable=True),
        sa.Column("params_digest", sa.String(80), nullable=False),
        sa.Column("instance", sa.String(100), nullable=False),
        sa.Column("resource_version", sa.String(200), nullable=True),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
        sa.Column("used_by", ID, nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        _ws_fk("grants"),
        _pk("grants", "id"),
        sa.UniqueConstraint("approval_id", name=op.f("uq_grants_approval_id")),
        sa.UniqueConstraint("used_by", name=op.f("uq_grants_used_by")),
        sa.UniqueConstraint("invocation_id", name=op.f("uq_grants_invocation_id")),
        sa.UniqueConstraint("invocation_id", name=op.f("uq_grants_invocation_id")),
        sa.UniqueConstraint("approval_id", name=op.f("uq_grants_approval_id")),
        sa.UniqueConstraint("used_by", name=op.f("uq_grants_used_by")),
    )
    op.create_table(
        "executions",
        sa.Column("id", ID, nullable=False),
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("invocation_id", ID, nullable=False),
        sa.Column("agent_id", ID, nullable=False),
        sa.Column("capability", sa.String(100), nullable=False),
        sa.Column("instance", sa.String(100), nullable=False),
        sa.Column("params_digest", sa.String(80), nullable=False),
        sa.Column("idempotency_key", sa.String(128), nullable=False),
        sa.Column("grant_id", ID, nullable=True),
        sa.Column("expected_version", sa.String(200), nullable=True),
        sa.Column("status", sa.String(24), nullable=False),
        sa.Column("job_id", sa.String(200), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("output", json(), nullable=True),
        sa.Column("error", json(), nullable=True),
        sa.Column("receipt", json(), nullable=True),
        sa.Column("started_at", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.Column("finished_at", sa.BigInteger(), nullable=True),
        _ws_fk("executions"),
        _pk("executions", "id"),
        sa.UniqueConstraint("idempotency_key", name=op.f("uq_executions_idempotency_key")),
        sa.UniqueConstraint("invocation_id", name=op.f("uq_executions_invocation_id")),
        sa.UniqueConstraint("invocation_id", name=op.f("uq_executions_invocation_id")),
        sa.UniqueConstraint("idempotency_key", name=op.f("uq_executions_idempotency_key")),
    )
    op.create_index(op.f("ix_executions_status"), "executions", ["status"], unique=False)
    op.create_index(
        op.f("ix_executions_workspace_id_status"),
        "executions",
        ["workspace_id", "status"],
        unique=False,
    )
    op.create_table(
        "provider_credentials",
        sa.Column("provider", ID, nullable=False),
        sa.Column("instance", sa.String(100), nullable=False),
        sa.Column("sealed", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        _pk("provider_credentials", "provider", "instance"),
    )


def downgrade() -> None:
    for table in reversed(TABLES):
        op.drop_table(table)
    with op.batch_alter_table("conversations") as batch:
        batch.drop_column("created_by")
        batch.drop_column("project_id")
