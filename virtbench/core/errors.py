"""Errors that reach the user as one line."""


class VirtbenchError(Exception):
    """Bad input (a study, a flag, an unknown name, a missing tool): exit 2, one line.

    The message names the thing and the fix.
    """

    exit_code = 2


class EnvironmentUnusable(VirtbenchError):
    """An environment cannot be started here; the message says why and what to do."""


class AgentError(Exception):
    """The agent did not answer, or answered with an error (a trial failure, not bad input).

    Raised by exec when the agent is lost mid-command, it carries the output that arrived
    before (`stdout`, `stderr`; empty when none did)."""

    stdout: str = ""
    stderr: str = ""


class AgentSilent(AgentError):
    """exec(alive=N): the agent said nothing for N s, not even that it is alive: the machine
    has stopped (a wedged guest), not merely the command."""
