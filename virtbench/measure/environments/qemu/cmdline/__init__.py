"""The qemu kind's options and the QEMU command line they make (pure): the option table and
its checks (options), the command line of one guest (argv), the firmware (firmware) and
microvm's kernel words under TCG (microvm)."""
