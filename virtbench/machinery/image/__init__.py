"""The guest images: the guest image every QEMU-based kind boots (guest_image.py) and the host image that hosts guests of its own (host_image.py)."""
