"""One module per report format, each an Exporter (../exporter.py) registered by name in
../registry.py."""
