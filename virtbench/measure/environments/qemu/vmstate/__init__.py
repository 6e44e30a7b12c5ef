"""A running guest's state taken over by a second QEMU: the second QEMU waiting for the state
(incoming), a snapshot saved to a file and restored (snapshot), a live migration under a
memory-dirtying workload (migrate)."""
