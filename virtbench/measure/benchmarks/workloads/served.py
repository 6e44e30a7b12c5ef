"""A server and its client in one command of the environment (`where=loopback`), pure.

Every server workload (redis, pgbench, nginx) runs the same way inside an environment: one
`sh -c` script, run through the environment's exec() like any benchmark, that

1. makes a fresh work directory of its own (`mktemp -d` under the environment's scratch
   directory) and runs the setup steps in it (a configuration written, a data directory
   made);
2. starts the server **in the foreground of a background job** (never a daemon that
   forks away: redis-server `--daemonize no`, nginx `-g 'daemon off;'`, postgres itself),
   its output to `server.log` (the server and the setup steps as `server_user` when given);
3. waits for it to answer (the `ready` command, every 0.1 s, at most `ready_s`), and stops
   at once if the server exits first;
4. runs the warm-up (its output kept only to say why it failed: the last lines of `warmup.log`
   on stderr) and then the client, whose output is the trial's, watching the server: one
   that exits mid-run ends the client at once (`virtbench: the server exited during the
   run`, exit 98) rather than leave a client retrying it until the trial's timeout;
5. on every exit, a failure and a TERM from a timeout included, stops the client and the
   server by their PIDs (the server: TERM, then KILL after 5 s) and removes the work
   directory. (A KILL of the script itself leaves that to whoever killed it: the process
   group, as exec() kills on a timeout.)

Nothing is left behind in the environment after a trial, and nothing named in a data file is
run: every program and argument comes from the benchmark's code and its checked parameters.
When a step fails, the script exits with the step's code and prints one line naming it
(`virtbench: server not ready after 30 s`, the server log's last lines after it) on stderr,
which the trial's error carries.
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass, field

NOT_READY_EXIT = 97         # the server did not answer within ready_s
SERVER_GONE_EXIT = 98       # the server exited before it answered


@dataclass(frozen=True)
class Served:
    """What one loopback trial runs (see the module). Commands are argv lists; `{work}` in
    any argument is the trial's work directory."""
    server: list[str]
    ready: list[str]
    client: list[str]
    setup: list[list[str]] = field(default_factory=list)
    warmup: list[list[str]] = field(default_factory=list)
    scratch: str = "/tmp"
    ready_s: float = 30.0
    # run the server and the setup steps (not the warm-up or the client) as this user:
    # postgres and its initdb refuse to run as root, and the data they make is the server's
    server_user: str | None = None

    def script(self) -> str:
        """The `sh -c` script (pure)."""
        server = self.as_server_user(self.server)
        tries = max(1, int(self.ready_s * 10))
        lines = [
            "set -u",
            f"work=$(mktemp -d {shlex.quote(self.scratch)}/virtbench-served.XXXXXX) || exit 1",
            "srv= cli=",
            "finish() { rc=$?; trap - EXIT INT TERM;"
            " if [ -n \"$cli\" ]; then kill -KILL \"$cli\" 2>/dev/null; fi;"
            " if [ -n \"$srv\" ]; then kill -TERM \"$srv\" 2>/dev/null;"
            " i=0; while kill -0 \"$srv\" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done;"
            " kill -KILL \"$srv\" 2>/dev/null; wait \"$srv\" 2>/dev/null; fi;"
            " rm -rf \"$work\"; exit $rc; }",
            "trap finish EXIT",
            "trap 'exit 143' INT TERM",
            'cd "$work" || exit 1',
        ]
        if self.server_user:
            lines.append(f'chown {shlex.quote(self.server_user)} "$work" || exit 1')
        for step in self.setup:
            lines.append(f"{self.as_server_user(step)} >>setup.log 2>&1 || {{ rc=$?; "
                         f"echo \"virtbench: setup step {shlex.quote(step[0])} failed (exit $rc)\" >&2;"
                         " tail -n 5 setup.log >&2; exit $rc; }")
        lines += [
            f"{server} >server.log 2>&1 &",
            "srv=$!",
            "i=0",
            f"until {cmd(self.ready)} >/dev/null 2>&1; do",
            f"  if ! kill -0 \"$srv\" 2>/dev/null; then echo 'virtbench: the server exited before"
            f" it answered' >&2; tail -n 5 server.log >&2; exit {SERVER_GONE_EXIT}; fi",
            f"  i=$((i+1)); if [ $i -ge {tries} ]; then echo 'virtbench: server not ready after"
            f" {self.ready_s:g} s' >&2; tail -n 5 server.log >&2; exit {NOT_READY_EXIT}; fi",
            "  sleep 0.1",
            "done",
        ]
        for step in self.warmup:
            lines.append(f"{cmd(step)} >warmup.log 2>&1 || {{ rc=$?; echo \"virtbench: warm-up "
                         f"{shlex.quote(step[0])} failed (exit $rc)\" >&2; tail -n 5 warmup.log >&2;"
                         " exit $rc; }")
        # in the background and watched: sh runs a trap only between commands, and a TERM
        # must not wait for the client to finish; a server that exits mid-run ends the
        # client at once (redis-benchmark 7.0 retries a gone server for ever)
        lines += [
            f"{cmd(self.client)} &",
            "cli=$!",
            'while kill -0 "$cli" 2>/dev/null; do',
            '  if ! kill -0 "$srv" 2>/dev/null; then',
            "    echo 'virtbench: the server exited during the run' >&2;"
            f" tail -n 5 server.log >&2; exit {SERVER_GONE_EXIT}",
            "  fi",
            "  sleep 0.2",
            "done",
            'wait "$cli"',
        ]
        return "\n".join(lines) + "\n"

    def as_server_user(self, argv: list[str]) -> str:
        """A command line for sh, run as `server_user` when there is one (pure)."""
        line = cmd(argv)
        if self.server_user:
            return f"runuser -u {shlex.quote(self.server_user)} -- {line}"
        return line

    def argv(self) -> list[str]:
        """What the environment's exec() runs."""
        return ["sh", "-c", self.script(), "virtbench-served"]


def word(arg: str) -> str:
    """One argument quoted for sh, `{work}` in it standing for the work directory (pure)."""
    parts = arg.split("{work}")
    return '"$work"'.join(shlex.quote(p) if p else "" for p in parts) or "''"


def cmd(argv: list[str]) -> str:
    """A command line for sh, each argument quoted (pure)."""
    return " ".join(word(a) for a in argv)
