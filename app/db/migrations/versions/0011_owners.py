"""Owner claims, owner profiles, paused sweeps and the owner audit log; who a directory row's
identity came from

Revision ID: 0011
Revises: 0010
Create Date: 2027-03-01 12:00:00.000000

Tables of :mod:`app.db.tables.owners`. ``directory`` gains ``named_by`` (``owner``, ``registry``
or none: where the row's title and description came from), ``publishers`` (how many registry
publishers list the endpoint with a remote that was probed) and ``claimed_at`` (the last
successful verification of a claim of its host). The upgrade's data step makes every row again
(:data:`app.directory.rows.MIGRATION_STEPS`), so rows made from a skipped remote's entry lose it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

Key = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Moment = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "claims",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("host", sa.String(253), nullable=False),
        sa.Column("challenge", sa.String(64), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("created_at", Moment, nullable=False),
        sa.Column("expires_at", Moment, nullable=False),
        sa.Column("verified_at", Moment, nullable=True),
        sa.Column("next_check", Moment, nullable=True),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("last_reason", sa.String(64), nullable=True),
        sa.Column("owner_token_sha256", sa.String(64), nullable=True, unique=True),
        sa.Column("claimed_job", sa.String(64), nullable=True),
    )
    op.create_index("ix_claims_host_state", "claims", ["host", "state"])
    op.create_index("ix_claims_state_next_check", "claims", ["state", "next_check"])
    op.create_table(
        "owner_profiles",
        sa.Column("server_id", sa.String(24), primary_key=True),
        sa.Column("host", sa.String(253), nullable=False),
        sa.Column("display_name", sa.String(100), nullable=True),
        sa.Column("description", sa.String(1000), nullable=True),
        sa.Column("updated_at", Moment, nullable=False),
    )
    op.create_table(
        "owner_hosts",
        sa.Column("host", sa.String(253), primary_key=True),
        sa.Column("sweeps_paused", sa.Boolean(), nullable=False),
        sa.Column("updated_at", Moment, nullable=False),
    )
    op.create_table(
        "owner_audit",
        sa.Column("id", Key, primary_key=True, autoincrement=True),
        sa.Column("claim", sa.String(32), nullable=False),
        sa.Column("host", sa.String(253), nullable=False),
        sa.Column("action", sa.String(32), nullable=False),
        sa.Column("target", sa.String(64), nullable=True),
        sa.Column("detail", sa.JSON(), nullable=True),
        sa.Column("at", Moment, nullable=False),
    )
    op.create_index("ix_owner_audit_host_id", "owner_audit", ["host", "id"])
    with op.batch_alter_table("directory") as batch:
        batch.add_column(sa.Column("named_by", sa.String(16), nullable=True))
        batch.add_column(sa.Column("publishers", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("claimed_at", Moment, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("directory") as batch:
        batch.drop_column("claimed_at")
        batch.drop_column("publishers")
        batch.drop_column("named_by")
    op.drop_index("ix_owner_audit_host_id", "owner_audit")
    op.drop_table("owner_audit")
    op.drop_table("owner_hosts")
    op.drop_table("owner_profiles")
    op.drop_index("ix_claims_state_next_check", "claims")
    op.drop_index("ix_claims_host_state", "claims")
    op.drop_table("claims")
