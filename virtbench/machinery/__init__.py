"""The machinery layer: the means every environment and benchmark uses.

agent/    the program inside every environment, and its host side
host/     this host: commands, namespaces, network paths, sshd, SSH sessions, pinning, the
          work root and its guardian, the checks of what virtbench trusts (trusted.py)
machine/  what a machine is and is doing: fingerprint, hypervisor layers, memory, load
kernels/  our C programs (src/) and their builder
image/    the guest image, the host image, another QEMU's tree and its fetch
exits/    exit profiles: KVM exits, TCG's would-be exits, symbols, the plugin
vmlife/   a VM's life-cycle costs: boot phases, footprint, migration, the density knee

May import foundations and core; its packages are one level.
"""
