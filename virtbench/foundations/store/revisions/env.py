"""Alembic's environment for virtbench's store.

virtbench runs it itself (virtbench.foundations.store.upgrade hands it a connection in a transaction, in
config.attributes["connection"]). By hand, with Alembic's own command:
    alembic -c virtbench/foundations/store/revisions/alembic.ini -x url=sqlite:///path/to/store.db upgrade head
and a new revision (after changing schema.py; then add it to upgrade.REVISIONS):
    alembic -c virtbench/foundations/store/revisions/alembic.ini -x url=sqlite:////tmp/x.db revision -m "..."
"""
from alembic import context

from virtbench.foundations.store.schema import metadata

config = context.config


def run(connection) -> None:
    context.configure(connection=connection, target_metadata=metadata,
                      render_as_batch=connection.dialect.name == "sqlite")
    with context.begin_transaction():
        context.run_migrations()


connection = config.attributes.get("connection")
if connection is not None:
    run(connection)
else:
    import sqlalchemy as sa

    from virtbench.foundations.store import normalize_url

    url = context.get_x_argument(as_dictionary=True).get("url") or \
        config.get_main_option("sqlalchemy.url")
    engine = sa.create_engine(normalize_url(url))
    with engine.begin() as conn:
        run(conn)
    engine.dispose()
