"""The directory keeps the name a server gives itself

Revision ID: 0013
Revises: 0012
Create Date: 2027-03-15 12:00:00.000000

``directory`` gains ``server_title``: the ``title``, else the ``name``, of the ``serverInfo`` its
latest run recorded (cleaned and capped by the probe), shown where no registry entry or owner
names the server. Rows made before keep it null until their server's next run.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("directory") as batch:
        batch.add_column(sa.Column("server_title", sa.String(128), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("directory") as batch:
        batch.drop_column("server_title")
