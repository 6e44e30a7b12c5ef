"""Application benchmarks: BLAST-style search (RIKEN 2012 ran blastn against refseq_rna).

refseq_rna cannot be downloaded here, so the database is generated in the environment,
deterministically from a seed, by a few lines of Python; the queries are mutated slices of
database sequences, so every query has a true hit. Only the blastn search is timed.
"""
from __future__ import annotations

import re

from ...core.errors import VirtbenchError
from .base import Benchmark, Metric, ParseError, TrialOutcome

# Runs in the environment (python3 is there for the agent): SEED NSEQ LEN NQ QLEN DIR
GENERATOR = r"""
import random, sys
seed, nseq, length, nq, qlen, out = sys.argv[1:]
seed, nseq, length, nq, qlen = map(int, (seed, nseq, length, nq, qlen))
r = random.Random(seed)
seqs = []
with open(out + "/db.fa", "w") as f:
    for i in range(nseq):
        s = "".join(r.choices("ACGT", k=length))
        seqs.append(s)
        f.write(">seq%d\n%s\n" % (i, s))
with open(out + "/query.fa", "w") as f:
    for i in range(nq):
        s = seqs[r.randrange(nseq)]
        a = r.randrange(length - qlen)
        q = list(s[a:a + qlen])
        for _ in range(qlen // 20):
            q[r.randrange(qlen)] = r.choice("ACGT")
        f.write(">q%d\n%s\n" % (i, "".join(q)))
"""

# The study's options. (BLAST+ 2.12 ignores -num_descriptions with -outfmt 7 and says so.)
STUDY_OPTIONS = ["-task", "blastn", "-dust", "no", "-outfmt", "7", "-num_alignments", "2",
                 "-num_descriptions", "2"]


def parse_blast_outfmt7(stdout: str) -> dict[str, float]:
    """Queries processed and hits found, from blastn's tabular-with-comments output."""
    processed = re.search(r"^# BLAST processed (\d+) quer", stdout, re.M)
    if not processed:
        raise ParseError("no '# BLAST processed N queries' line: blastn did not finish")
    hits = [int(n) for n in re.findall(r"^# (\d+) hits found", stdout, re.M)]
    queries = len(re.findall(r"^# Query: ", stdout, re.M))
    if queries != int(processed.group(1)):
        raise ParseError(f"{queries} query sections for {processed.group(1)} processed")
    return {"queries": float(queries), "hits": float(sum(hits))}


class Blast(Benchmark):
    name = "blast"
    family = "application"
    description = "blastn (ncbi-blast+) with RIKEN's options against a generated nucleotide database"
    metrics = (Metric("seconds", "s", False, "wall time of the blastn search",
                      aggregate="makespan"),)
    tools = ("blastn", "makeblastdb", "python3")
    packages = ("ncbi-blast+",)
    needs = ("scratch",)
    defaults = {"seed": 1, "sequences": 20000, "length": 2000, "queries": 50, "query_length": 500,
                "threads": 1}
    quick = {"sequences": 1000, "queries": 5}

    def check(self, params):
        if params["query_length"] >= params["length"] or min(params["sequences"], params["queries"],
                                                              params["threads"]) < 1:
            raise VirtbenchError("benchmark blast: need query_length < length, and sequences, "
                                 "queries, threads >= 1")

    def timeout(self, params):
        return 600.0 + params["sequences"] * params["queries"] * 0.01

    def _workdir(self, env, params) -> str:
        key = "-".join(str(params[k]) for k in ("seed", "sequences", "length", "queries",
                                                 "query_length"))
        return f"{env.scratch_dir()}/blast-{key}"

    def _prepare(self, env, params) -> str | None:
        """Generate the database once per environment; an error text, or None."""
        work = self._workdir(env, params)
        if env.exec(["test", "-s", f"{work}/db.nsq"], timeout=30).exit == 0:
            return None
        steps = [["mkdir", "-p", work],
                 ["python3", "-c", GENERATOR, *(str(params[k]) for k in (
                     "seed", "sequences", "length", "queries", "query_length")), work],
                 ["makeblastdb", "-in", f"{work}/db.fa", "-dbtype", "nucl", "-out", f"{work}/db"]]
        for argv in steps:
            r = env.exec(argv, timeout=self.timeout(params))
            if r.exit != 0:
                last = (r.stderr.strip() or "(no output)").splitlines()[-1]
                hint = "; install ncbi-blast+ in the environment" if r.exit == 127 else ""
                return f"{argv[0]} failed (exit {r.exit}): {last}{hint}"
        return None

    def run_trial(self, env, params) -> TrialOutcome:
        try:
            error = self._prepare(env, params)
        except VirtbenchError as exc:
            error = str(exc)
        if error:
            return TrialOutcome(error=error)
        work = self._workdir(env, params)
        argv = ["blastn", *STUDY_OPTIONS, "-num_threads", str(params["threads"]),
                "-query", f"{work}/query.fa", "-db", f"{work}/db"]
        r = env.exec(argv, timeout=self.timeout(params))
        out = TrialOutcome(stdout=r.stdout, stderr=r.stderr, exit=r.exit, wall_s=r.wall_s)
        if r.exit != 0 or r.timed_out:
            last = (r.stderr.strip() or "(no output)").splitlines()[-1]
            out.error = f"blastn exit {r.exit}: {last}"
            return out
        try:
            found = parse_blast_outfmt7(r.stdout)
        except ParseError as exc:
            out.error = f"unparsable output: {exc}"
            return out
        if found["queries"] != params["queries"]:
            out.error = f"blastn processed {found['queries']:.0f} of {params['queries']} queries"
            return out
        out.values = {"seconds": r.wall_s}
        return out
