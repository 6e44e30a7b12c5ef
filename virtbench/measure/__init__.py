"""The measure layer: where a benchmark runs and what it runs.

environments/  one package per kind (native, qemu, libvirt, ssh, container, gvisor, nested),
               the life cycle written once in base.py, what each kind declares it offers
benchmarks/    one module per family: the command, the tools it needs, a pure parser

May import machinery, foundations and core. environments and benchmarks never import each
other: a benchmark asks the environment it is given for declared capabilities.
"""
