"""The settings the embedded PostgreSQL runs with, written into its data directory.

They live in their own file inside PGDATA, included at the end of postgresql.conf, so
rewriting them on every start is idempotent.  The server log is configured so that it never
contains statements or parameters (see ``PRIVACY_SETTINGS``).
"""

from __future__ import annotations

import os
from pathlib import Path

from ibex_worker.devstack.ports import LOCALHOST, remembered_port
from ibex_worker.devstack.postgres_binaries import ServiceUser

CONF_NAME = "ibex.conf"
INCLUDE_LINE = f"include_if_exists = '{CONF_NAME}'"

# The server log must never contain memory content: no statements (not even
# the one that failed), no bind parameters, no DETAIL/CONTEXT lines.
# log_min_messages is "log", not "warning": an ERROR's primary message can
# echo the rejected value (invalid input syntax for type integer: "<value>"),
# and client ERROR/WARNING messages are only suppressed below level LOG (in
# this setting's ordering LOG ranks above ERROR).  Server LOG/FATAL/PANIC
# messages (startup, shutdown, checkpoints, crashes) are still written.
PRIVACY_SETTINGS = {
    "log_min_messages": "log",
    "log_min_error_statement": "panic",
    "log_error_verbosity": "terse",
    "log_statement": "'none'",
    "log_min_duration_statement": "-1",
    "log_min_duration_sample": "-1",
    "log_transaction_sample_rate": "0",
    "log_parameter_max_length": "0",
    "log_parameter_max_length_on_error": "0",
    "log_connections": "''",
    "log_disconnections": "off",
}


def configured_port(data_dir: Path) -> int | None:
    """The port the last ``write_config`` wrote into ``data_dir``, if any."""
    return remembered_port(data_dir / CONF_NAME, r"^port\s*=\s*(\d+)")


def write_config(data_dir: Path, port: int, fsync: bool, service: ServiceUser) -> None:
    """Write ``ibex.conf`` (owned by the service user, mode 0600) and include it from
    postgresql.conf once."""
    settings: dict[str, str] = {
        "listen_addresses": f"'{LOCALHOST}'",
        "port": str(port),
        "unix_socket_directories": "''",
        "max_connections": "200",
        "fsync": "on" if fsync else "off",
        "synchronous_commit": "on" if fsync else "off",
        "full_page_writes": "on" if fsync else "off",
        "logging_collector": "off",
        **PRIVACY_SETTINGS,
    }
    body = "# Written by ibex_worker.devstack on every start; edits are overwritten.\n" + "".join(
        f"{key} = {value}\n" for key, value in settings.items()
    )
    conf = data_dir / CONF_NAME
    tmp = conf.with_name(conf.name + ".tmp")
    tmp.write_text(body)
    service.chown(tmp)
    tmp.chmod(0o600)
    os.replace(tmp, conf)

    main_conf = data_dir / "postgresql.conf"
    text = main_conf.read_text()
    if INCLUDE_LINE not in text.splitlines():
        with main_conf.open("a") as fh:  # appending keeps owner and mode
            if text and not text.endswith("\n"):
                fh.write("\n")
            fh.write(INCLUDE_LINE + "\n")
