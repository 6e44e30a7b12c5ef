"""A run as an artifact for a paper (docs/papers.md, "The artifact"): `virtbench export RUN
--artifact PATH` writes it, `virtbench import PATH` loads it, `virtbench run --replay PATH`
runs its study again.

manifest.py  artifact.json and SHA256SUMS, and the check of an artifact read back (pure)
readme.py    its README.md (pure)
build.py     its files made from a run's rows and report; read back into what import loads
load.py      its run loaded into a store
replay.py    an artifact opened to run its study again (`run --replay`)
archive.py   a directory or .tar.gz read into its files and written from them (side effects)
"""
