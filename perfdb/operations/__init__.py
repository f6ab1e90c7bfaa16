"""Running the service: what operators and the processes need, not what the pages show.

Health and status reports (``health``, ``status``), backup and restore (``backup``), uploader
accounts and API tokens (``accounts``), reads sent to a replica (``db_router``), the client's
address behind a proxy (``client_ip``), the ids every log line carries (``log_context``),
which errors a task retries (``transient``), header-safe text (``headers``), the cycle
collector paused around big work (``gc_pause``) and the pause points of the fault tests
(``faults``). Each is small and stands alone; none reads or writes the page cache except
``backup``, which invalidates it after a restore.
"""
