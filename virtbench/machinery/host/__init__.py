"""This host's side of a run: commands on the host, network namespaces and paths, the private sshd, SSH sessions, pinning, the work root and the guardian that cleans up after a crash."""
