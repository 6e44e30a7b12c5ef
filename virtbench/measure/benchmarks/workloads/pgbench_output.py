"""pgbench 15's output, and the trial's whole output as virtbench's client script prints it
(pure).

One pgbench run prints its summary on stdout (`tps = 293.311350 (without initial connection
time)`, `number of transactions actually processed: 892`, `duration: 3 s`, with `--rate` also
`rate limit schedule lag: avg 1.968 (max 42.571) ms`) and its errors on stderr; the client
script merges the two (`2>&1`), so that an error reaches the parser. A run whose clients
aborted (the server died under it) still prints a whole summary, with a tps over the time
the clients ran, and says only on stderr `pgbench: error: Run was aborted; the above results
are incomplete.`: that line, any other `pgbench: error:` line, and a run that processed
fewer than half the transactions its tps and duration imply (the same run with its stderr
lost) are refused in one line, never read as a number.

The client script (pgbench.py) prints a plan line first, a marker line before each run, and
after the latency run one summary line of the transaction log's latencies, which it sorts in
the environment (see pgbench.py for why there):

    == virtbench pgbench: plan: throughput latency
    == virtbench pgbench: throughput run, unthrottled (closed loop)
    ...pgbench's output...
    == virtbench pgbench: latency run, 100 transactions/s offered for 3 s (open loop)
    ...pgbench's output...
    == virtbench pgbench: latency log: transactions=293 not_done=0 q0.5_us=10969 q0.99_us=52003
"""
from __future__ import annotations

import re

from ..base import ParseError
from .percentiles import metric_name, quantile_of, requests_needed

MARK = "== virtbench pgbench: "
PLAN, THROUGHPUT, LATENCY, LOG = "plan: ", "throughput run", "latency run", "latency log: "
# a run that processed fewer transactions than this share of tps x duration ended early
EARLY = 0.5
# the latency run kept its offered rate when it processed at least this share of it
KEPT = 0.9

_NUMBER = r"([0-9]+(?:\.[0-9]+)?)"


def _field(text: str, pattern: str, what: str) -> float:
    match = re.search(pattern, text, re.M)
    if not match:
        raise ParseError(f"no {what} in pgbench's output: it did not finish")
    return float(match.group(1))


def parse_pgbench(text: str) -> dict[str, float]:
    """One pgbench run's summary: tps, transactions, duration_s, failed, and with --rate
    lag_avg_ms and lag_max_ms; ParseError for an error, an abort or a run cut short."""
    errors = [line.strip() for line in text.splitlines() if line.startswith("pgbench: error:")]
    aborted = [line for line in errors if "Run was aborted" in line]
    if aborted or errors:
        raise ParseError((aborted or errors)[0])
    out = {"tps": _field(text, rf"^tps = {_NUMBER} \(without initial connection time\)",
                         "'tps = ' line"),
           "transactions": _field(text, r"^number of transactions actually processed: ([0-9]+)",
                                  "'number of transactions actually processed' line"),
           "duration_s": _field(text, r"^duration: ([0-9]+) s", "'duration: N s' line"),
           "failed": _field(text, r"^number of failed transactions: ([0-9]+)",
                            "'number of failed transactions' line")}
    if out["failed"] > 0:
        raise ParseError(f"{out['failed']:.0f} transactions failed: pgbench's tps leaves them "
                         "out, so it is not the run's")
    if out["transactions"] < EARLY * out["tps"] * out["duration_s"]:
        raise ParseError(f"pgbench processed {out['transactions']:.0f} transactions, fewer than "
                         f"half of tps {out['tps']:.1f} x {out['duration_s']:.0f} s: the run "
                         "ended early")
    lag = re.search(rf"^rate limit schedule lag: avg {_NUMBER} \(max {_NUMBER}\) ms", text, re.M)
    if lag:
        out["lag_avg_ms"], out["lag_max_ms"] = float(lag.group(1)), float(lag.group(2))
    return out


def parse_latency_log(line: str) -> dict[str, float]:
    """The summary line of the transaction log: transactions, not_done, and each quantile's
    latency as its metric (p50_ms ...), in ms; ParseError for no transactions."""
    fields = dict(re.findall(r"(\S+)=(\S+)", line))
    try:
        n, not_done = int(fields["transactions"]), int(fields["not_done"])
        quantiles = {float(k[1:-3]): float(v) for k, v in fields.items()
                     if re.fullmatch(r"q[0-9.]+_us", k)}
    except (KeyError, ValueError) as exc:
        raise ParseError(f"malformed latency log line: {line.strip()!r}") from exc
    if n <= 0:
        raise ParseError("the latency run logged no transactions")
    out = {"transactions": float(n), "not_done": float(not_done)}
    out.update({metric_name(q): us / 1000.0 for q, us in quantiles.items()})
    return out


def short_percentiles(log: dict[str, float]) -> list[str]:
    """The percentiles of a parsed log summary (parse_latency_log) that too few transactions
    were done for (an environment that fell behind its offered rate): left out of the trial
    (pure)."""
    return [k for k in log if k.startswith("p")
            and log["transactions"] < requests_needed(quantile_of(k))]


def sections(stdout: str) -> dict[str, str]:
    """The trial's output by marker: plan, throughput run, latency run, latency log."""
    parts: dict[str, list[str]] = {}
    current = None
    for line in stdout.splitlines():
        if line.startswith(MARK):
            rest = line[len(MARK):]
            current = next((k for k in (PLAN, THROUGHPUT, LATENCY, LOG) if rest.startswith(k)),
                           None)
            if current in (PLAN, LOG):
                parts[current] = [rest[len(current):]]
                current = None
            elif current:
                parts[current] = [rest]
            continue
        if current:
            parts[current].append(line)
    return {k: "\n".join(v) for k, v in parts.items()}


def parse_trial(stdout: str) -> dict[str, float]:
    """The trial's metrics: tps from the unthrottled run, the percentiles from the latency
    run's log (each only where the run did the transactions it needs: an environment behind
    its rate does fewer than were offered); ParseError when a run the plan names is missing,
    failed or cut short."""
    parts = sections(stdout)
    if PLAN not in parts:
        raise ParseError("no plan line: the client script did not start")
    plan = parts[PLAN].split()
    if THROUGHPUT.split()[0] not in plan:
        raise ParseError(f"the plan {parts[PLAN]!r} has no throughput run")
    if THROUGHPUT not in parts:
        raise ParseError("the throughput run did not start")
    values = {"tps": parse_pgbench(parts[THROUGHPUT])["tps"]}
    if "latency" in plan:
        if LATENCY not in parts:
            raise ParseError("the latency run did not start")
        parse_pgbench(parts[LATENCY])
        if LOG not in parts:
            raise ParseError("no latency log line: the latency run's log was not read")
        log = parse_latency_log(parts[LOG])
        short = short_percentiles(log)      # too few done: rate_kept says so
        values.update({k: v for k, v in log.items() if k.startswith("p") and k not in short})
    return values


def rate_kept(stdout: str) -> str | None:
    """One line when the latency run fell behind its offered rate, or left transactions not
    done (skipped, failed); None when it kept it or did not run (pure)."""
    parts = sections(stdout)
    head = re.match(rf"latency run, {_NUMBER} transactions/s offered for ([0-9]+) s",
                    parts.get(LATENCY, ""))
    if not head:
        return None
    try:
        run = parse_pgbench(parts[LATENCY])
        log = parse_latency_log(parts.get(LOG, ""))
    except ParseError:
        return None
    rate, seconds = float(head.group(1)), int(head.group(2))
    offered = rate * seconds
    behind = run["transactions"] < KEPT * offered
    if not behind and not log["not_done"]:
        return None
    short = short_percentiles(log)
    left = (f"; {', '.join(short)} left out ({log['transactions']:.0f} transactions done)"
            if short else "")
    return (f"pgbench latency run: {run['transactions']:.0f} of the {offered:.0f} transactions "
            f"offered ({rate:g}/s for {seconds} s) were done, {log['not_done']:.0f} not done; "
            f"schedule lag avg {run.get('lag_avg_ms', 0):.1f} ms (max "
            f"{run.get('lag_max_ms', 0):.1f}): the percentiles count a queue that grew{left}; "
            "lower rate")
