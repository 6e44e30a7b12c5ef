from virtbench.core.urls import scrub, shown


def test_a_password_is_masked_and_nothing_else_changes():
    assert shown("redis://:pw@127.0.0.1:6379/0") == "redis://:***@127.0.0.1:6379/0"
    assert shown("postgresql+psycopg://bench:pw@db.example/vb?host=/run") == \
        "postgresql+psycopg://bench:***@db.example/vb?host=/run"
    for url in ("redis://127.0.0.1:6379/0", "sqlite:////tmp/x.db",
                "postgresql://bench@db/vb"):
        assert shown(url) == url


def test_an_error_message_loses_the_password_wherever_it_appears():
    url = "redis://:hunter2@h:6379/0"
    text = f"cannot connect to {url}: AUTH hunter2 failed"
    assert scrub(text, url) == "cannot connect to redis://:***@h:6379/0: AUTH *** failed"
    assert scrub("plain", None, url) == "plain"
