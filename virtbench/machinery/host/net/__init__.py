"""This host's network side: the namespaces virtbench makes (netns.py), an environment's
network path and its peer (netpath.py, netpath_types.py), a private sshd (sshd.py) and SSH
sessions to targets (sshsession.py)."""
