"""What a machine is and is doing: its fingerprint, the hypervisor layers it runs on, its memory and its load."""
