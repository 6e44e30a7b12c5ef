"""No secret in any output: a fleet run whose broker (Redis with requirepass) and store
(PostgreSQL) URLs carry passwords; the password must appear in no command's output, no worker
log, no report format and no text the store keeps."""
from __future__ import annotations

import pytest
import sqlalchemy as sa

from fleetkit import Worker, run_cli
from pgserver import pg_server, pg_url  # noqa: F401  (fixtures)
from redisserver import RedisServer, redis_available
from virtbench.foundations.store import Store

SECRET = "s3cretPassw0rdXYZ"


@pytest.fixture
def secret_broker():
    if not redis_available():
        pytest.skip("redis-server is not installed (scripts/setup.sh --all installs it)")
    server = RedisServer(password=SECRET)
    try:
        yield server
    finally:
        server.stop()


def test_a_fleet_run_shows_no_password_anywhere(secret_broker, pg_url, tmp_path):  # noqa: F811
    # the test server trusts local connections: the password is carried, not checked
    store = pg_url.replace("postgres@", f"postgres:{SECRET}@", 1)
    assert SECRET in store and SECRET in secret_broker.url
    Store(store)
    worker = Worker("a", secret_broker.url, store, tmp_path).wait_ready()
    outputs = {}
    try:
        res = run_cli(secret_broker.url, store, "fleet", "run", "--env", "native", "--bench",
                      "pi", "--trials", "2", "--quick", "--min-section", "0", "--host", "a", "--wait")
        assert res.returncode == 0, res.stderr
        fleet_id = res.stdout.strip()
        outputs["fleet run"] = res.stdout + res.stderr
        for args in (("fleet", "status", fleet_id), ("runs",), ("runs", "--store", store),
                     *(("report", "--fleet", fleet_id, "--format", f)
                       for f in ("table", "markdown", "csv", "json", "html")),
                     ("fleet", "run", "--env", "native", "--bench", "pi", "--host", "nobody",
                      "--worker-timeout", "1")):
            out = run_cli(secret_broker.url, store, *args)
            outputs[" ".join(args)] = out.stdout + out.stderr
        assert "serving queue" in worker.text()
    finally:
        worker.stop()
    outputs["worker"] = worker.log.read_text()
    assert "no worker consumes" in outputs[" ".join(("fleet", "run", "--env", "native", "--bench",
                                                       "pi", "--host", "nobody",
                                                       "--worker-timeout", "1"))]
    engine = sa.create_engine(store)
    with engine.connect() as conn:
        for table in sa.inspect(engine).get_table_names():
            for row in conn.execute(sa.text(f'select * from "{table}"')):
                outputs[f"store {table}"] = outputs.get(f"store {table}", "") + repr(tuple(row))
    engine.dispose()
    leaked = [where for where, text in outputs.items() if SECRET in text]
    assert not leaked, f"password shown in: {leaked}"
    assert "***" in outputs["worker"]          # the URLs are shown, masked
