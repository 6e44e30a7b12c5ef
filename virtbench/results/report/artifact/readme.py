"""An artifact's README.md: what each file is, and the exact commands that import it and run
its study again. Pure."""
from __future__ import annotations

# file (or the directory its name starts) -> what it is
WHAT = {
    "README.md": "this file",
    "artifact.json": "the manifest: artifact format version, virtbench version, run id, "
                     "store schema revision, report schema version, every file with its "
                     "size and SHA-256",
    "SHA256SUMS": "the SHA-256 of every other file (`sha256sum -c SHA256SUMS` checks them)",
    "study.json": "the study as the run stored it: resolved, every flag applied, the seed "
                  "chosen (what `virtbench run --replay` runs again)",
    "run.json": "every row of the run in the store (run, environments, trials, samples, "
                "boots, profiles, warnings): what `virtbench import` loads",
    "samples.csv": "the raw samples, one row per stored value (warm-ups and failed trials' "
                   "evidence included, marked)",
    "samples.json": "the same samples as a JSON array",
    "fingerprints.json": "every environment's fingerprint (kind, spec, options, what it "
                         "read back of itself) and the host's",
    "report/": "the run's report in every format (report.txt, .md, .json, .csv, .html, .tex)",
    "figures/": "the run's figures for a paper (PDF and SVG; `virtbench figures`)",
}


def readme(run_id: str, study: str, version: str, files: list[str],
           figures_note: str | None, name: str) -> str:
    """README.md of the artifact of run `run_id` (study `study`) made by virtbench `version`,
    holding `files`; `figures_note`: why it holds no figures, if it does not; `name`: the
    artifact's path as the commands give it."""
    listed = []
    for key, what in WHAT.items():
        held = [f for f in files if f == key or (key.endswith("/") and f.startswith(key))]
        if held or key in ("README.md", "artifact.json", "SHA256SUMS"):
            listed.append(f"- `{key}`: {what}" + (f" ({len(held)} files)" if key.endswith("/")
                                                   else ""))
    figures = f"\nNo figures: {figures_note}.\n" if figures_note else ""
    return f"""# virtbench artifact: run {run_id}

The results of virtbench run `{run_id}` (study `{study}`), exported by virtbench {version}
with `virtbench export {run_id} --artifact {name}`.

## Check it, import it, run it again

```sh
sha256sum -c SHA256SUMS            # inside the artifact: every file as exported
virtbench import {name}
virtbench report {run_id}
virtbench run --replay {name}
```

`virtbench import` loads the run into the store (`--store URL`: another), keeping its id;
`virtbench report` and `compare` then read it like any run. It refuses an artifact whose
files differ from SHA256SUMS, with a file missing or one too many, in one line, and imports
nothing. `virtbench run --replay` runs
the stored study (same environments, benchmarks, trials, seed and flags), stores it as a
new run, and reports it with a comparison against run `{run_id}`: per metric the two runs'
values and the decision, and what differs in the stack (kernel, QEMU, CPU, ...).

## The files

{chr(10).join(listed)}
{figures}"""
