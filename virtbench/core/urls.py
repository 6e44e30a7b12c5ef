"""URLs as virtbench shows them: never with their password (store and broker URLs appear in
messages, tables, reports and logs; a password in them is a secret)."""
from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

MASK = "***"


def shown(url: str) -> str:
    """`url` with its password (if any) replaced by ***, for any message or record (pure)."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return url
    if not password:
        return url
    user = parts.username or ""
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{user}:{MASK}@{host}"))


def scrub(text: str, *urls: str | None) -> str:
    """`text` (an error message, say) with the password of each of `urls` masked wherever it
    appears, and each URL itself shown without it (pure)."""
    for url in urls:
        if not url:
            continue
        text = text.replace(url, shown(url))
        try:
            password = urlsplit(url).password
        except ValueError:
            password = None
        if password:
            text = text.replace(password, MASK)
    return text
