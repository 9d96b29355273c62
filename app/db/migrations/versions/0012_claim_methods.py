"""How a claim is proved (a well-known document or a DNS TXT record), and the summaries of
credentialed checks an owner may read

Revision ID: 0012
Revises: 0011
Create Date: 2027-03-08 12:00:00.000000

``claims`` gains ``method`` (``well_known`` for every claim made before). ``credentialed_checks``
keeps, per server, what a check made with a caller's credentials found, as names and counts
only (:mod:`app.claims.credentialed`).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

Key = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Moment = sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("claims") as batch:
        batch.add_column(sa.Column("method", sa.String(16), nullable=False, server_default="well_known"))
    op.create_table(
        "credentialed_checks",
        sa.Column("id", Key, primary_key=True, autoincrement=True),
        sa.Column("server_id", sa.String(24), nullable=False),
        sa.Column("host", sa.String(253), nullable=False),
        sa.Column("checked_at", Moment, nullable=False),
        sa.Column("summary", sa.JSON(), nullable=False),
    )
    op.create_index("ix_credentialed_checks_server_id_id", "credentialed_checks", ["server_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_credentialed_checks_server_id_id", "credentialed_checks")
    op.drop_table("credentialed_checks")
    with op.batch_alter_table("claims") as batch:
        batch.drop_column("method")
