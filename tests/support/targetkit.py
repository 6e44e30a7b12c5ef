"""A study naming a target (Xen, in the paper) and a published figure, for the target tests."""


STUDY = """
name = "targets"
trials = 2
[[environment]]
spec = "native"
[[environment]]
spec = "xen:vcpus=1"
requires = "xen"
target = "loop"
note = "XenServer in the paper"
[[benchmark]]
name = "pi"
[[published]]
environment = "xen:vcpus=1"
benchmark = "pi"
metric = "seconds"
ratio = 1.05
source = "Table 5"
"""
