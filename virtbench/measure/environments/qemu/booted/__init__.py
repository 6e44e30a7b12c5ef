"""The guest from its boot on: the boot's parts that do not depend on who runs the VMM (boot),
the boot timer (boottimer), what is done inside the guest through its agent (guest), the
guest tunings (tunings) and the reading back of tunings and knobs (readback, knobs)."""
