"""The live part of tests/unit/store/test_store_upgrade.py: its tests that need a server.

Schema revisions: a new store is made at head, an older one (with or without revisions) is
upgraded with its rows intact, a newer one is refused in one line; on SQLite and PostgreSQL.
"""
import pytest
from pgserver import store_url_on_both  # noqa: F401  (store_url: SQLite and PostgreSQL)
from virtbench.foundations.store import Store, normalize_url


def test_postgresql_urls_mean_psycopg(pg_server):
    assert normalize_url("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalize_url("postgres://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalize_url("postgresql+psycopg://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalize_url("sqlite:////x.db") == "sqlite:////x.db"
    bare = pg_server.url_for().replace("postgresql+psycopg://", "postgresql://")
    store = Store(bare)
    assert store.engine.dialect.driver == "psycopg"
    assert store.list_runs() == []


def test_messages_never_show_the_store_password(pg_server):
    from virtbench.core.errors import VirtbenchError
    url = pg_server.url_for().replace("postgres@", "postgres:hunter2@")
    with pytest.raises(VirtbenchError) as exc:
        Store(url).get_run("nope")
    assert "hunter2" not in str(exc.value) and "postgres:***@" in str(exc.value)
