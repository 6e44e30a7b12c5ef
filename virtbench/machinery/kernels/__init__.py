"""Our benchmark kernels: their C sources (src/) and the builder that compiles them once per source hash (build.py)."""
