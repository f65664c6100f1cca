"""A JDBC url of PostgreSQL (``jdbc:postgresql://host:port/db?...``) as a libpq connection.

The ``jdbc`` connector speaks to PostgreSQL through psycopg (libpq), not a JDBC
driver: the url a Flink table declares is parsed into libpq's keywords. The
url's parameters that libpq has under another name are renamed (``user``,
``password``, ``sslmode``, ``connectTimeout``, ``ApplicationName``,
``currentSchema``); any other parameter is refused by name rather than ignored.

>>> conninfo("jdbc:postgresql://db.example:5433/shop?sslmode=require&connectTimeout=5")
{'host': 'db.example', 'port': '5433', 'dbname': 'shop', 'sslmode': 'require', 'connect_timeout': '5'}
>>> conninfo("jdbc:postgresql://h1,h2:6000/db")["host"], conninfo("jdbc:postgresql:shop")
('h1,h2', {'dbname': 'shop'})
>>> conninfo("jdbc:mysql://h/db")
Traceback (most recent call last):
...
ValueError: only PostgreSQL urls (jdbc:postgresql://host:port/database) are supported, got 'jdbc:mysql://h/db'
"""

from __future__ import annotations

from urllib.parse import parse_qsl, unquote

_PREFIX = "jdbc:postgresql:"
# PostgreSQL JDBC driver parameter -> libpq keyword.
_PARAMETERS = {"user": "user", "password": "password", "sslmode": "sslmode", "connectTimeout": "connect_timeout",
               "ApplicationName": "application_name", "applicationName": "application_name",
               "sslrootcert": "sslrootcert", "sslcert": "sslcert", "sslkey": "sslkey"}


def conninfo(url: str) -> dict[str, str]:
    """libpq's connection keywords for a PostgreSQL JDBC ``url`` (a ``ValueError`` saying why it is not one)."""
    if not url.startswith(_PREFIX):
        raise ValueError(f"only PostgreSQL urls (jdbc:postgresql://host:port/database) are supported, got '{url}'")
    rest = url[len(_PREFIX):]
    rest, _, query = rest.partition("?")
    info: dict[str, str] = {}
    if rest.startswith("//"):
        authority, slash, database = rest[2:].partition("/")
        if not slash:
            database = ""
        hosts, ports = [], []
        for part in authority.split(","):
            if not part:
                continue
            host, colon, port = part.rpartition(":") if not part.endswith("]") else (part, "", "")
            if not colon:
                host, port = part, ""
            if port and not port.isdigit():
                raise ValueError(f"the port '{port}' in url '{url}' is not a number")
            hosts.append(host.strip("[]"))
            ports.append(port)
        if hosts:
            info["host"] = ",".join(hosts)
        if any(ports):
            info["port"] = ",".join(p or "5432" for p in ports)
    else:
        database = rest
    if database:
        info["dbname"] = unquote(database)
    for key, value in parse_qsl(query, keep_blank_values=True):
        if key == "currentSchema":
            info["options"] = f"-c search_path={value}"
        elif key in _PARAMETERS:
            info[_PARAMETERS[key]] = value
        else:
            raise ValueError(f"the url parameter '{key}' is not supported (supported: "
                             f"{', '.join(sorted(_PARAMETERS) + ['currentSchema'])})")
    return info


def shown(url: str) -> str:
    """The url without a password parameter, for error messages.

    >>> shown("jdbc:postgresql://h/db?user=u&password=secret")
    'jdbc:postgresql://h/db?user=u&password=***'
    """
    head, _, query = url.partition("?")
    if not query:
        return url
    parts = [p if not p.startswith("password=") else "password=***" for p in query.split("&")]
    return head + "?" + "&".join(parts)
