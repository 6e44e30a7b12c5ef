"""The agent: the one small program inside every environment (program.py) and the host's side of its protocol (transport.py)."""
