"""The development stack: real servers and processes on one machine, no Docker.

``ibex up``, the tests and the benchmarks run on it.  Both servers are real binaries shipped
inside Python wheels, so no system packages are needed either.

- ``postgres``: ``EmbeddedPostgres``, PostgreSQL 18 with pgvector on 127.0.0.1;
  ``postgres_binaries`` (the bundled binaries and the OS user they run as) and
  ``postgres_config`` (the settings it runs with, a log without statements or parameters).
- ``redis``: ``EmbeddedRedis``, Redis 6.2 with an append-only file.
- ``process``: ``Proc``, the one supervisor of an ``ibex`` child process (process group, log
  file, ``wait_for_log``, SIGTERM then SIGKILL).
- ``stack``: ``Stack``, what ``ibex up`` runs; ``lock``: ``StackLock``, one stack per data
  folder.
- ``ports``: ``free_port`` and the other port checks.
"""
