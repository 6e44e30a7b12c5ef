"""Exit profiles: why a guest is slower. Under KVM, VM exits by reason and by guest function
(perf kvm stat, the kvm_exit tracepoint, QMP query-stats); under TCG, would-be exits (port I/O
and MMIO to emulated devices) counted by our own TCG plugin; guest addresses symbolised with
the guest's /proc/kallsyms. The profile (exit_profile.py) is what the store and the reports keep."""
