"""Guest addresses -> guest functions, with the guest's own /proc/kallsyms (pure).

Read /proc/kallsyms in the same boot as the profile: KASLR moves the kernel at every boot
and modules load wherever there is room. Module symbols carry their module (`[libata]`).
Debian's /boot/System.map is a stub, so kallsyms is the only source.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from ...core.errors import VirtbenchError

TEXT_TYPES = frozenset("tTwW")
MAX_OFFSET = 0x10000     # beyond this past the last symbol an address is "unknown"

# Generic accessors: the function that does the I/O is not the one that wanted it, so a
# profile names the caller too (Zhang et al. Table 2: ioread16/iowrite16 of the driver).
_ACCESSOR = re.compile(
    r"^(?:__)?(?:ioread|iowrite)(?:8|16|32|64)(?:be)?(?:_lo_hi|_hi_lo)?(?:_rep|_copy)?$"
    r"|^(?:__)?(?:read|write)[bwlq](?:_relaxed)?$"
    r"|^(?:in|out)[bwl](?:_p)?$|^(?:in|out)s[bwl]$|^native_io_delay$|^slow_down_io$"
    r"|^(?:__)?memcpy_(?:to|from)io$|^memset_io$|^__iowrite(?:32|64)_copy$"
    r"|^acpi_os_(?:read|write)_(?:port|memory)$|^acpi_hw_(?:read|write)(?:_port)?$"
    r"|^bad_io_access$|^pci_iounmap$"
    r"|^native_apic_mem_(?:read|write)$|^native_apic_icr_(?:read|write)$|^io_apic_(?:read|write)$")


# Code that only passes control on (retpolines, return thunks): never "the caller".
_TRAMPOLINE = re.compile(r"^__x86_(?:indirect|return)_(?:call_|jump_)?thunk|^__x86_return_thunk"
                         r"|^zen_untrain_ret$|^srso_|^__fentry__$|^__cfi_")


def is_trampoline(function: str | None) -> bool:
    return bool(function) and bool(_TRAMPOLINE.match(function))


def is_accessor(function: str | None) -> bool:
    """Whether a function name (no offset, no module) is a generic I/O accessor."""
    return bool(function) and bool(_ACCESSOR.match(function))


@dataclass(frozen=True)
class Symbol:
    address: int
    name: str
    module: str | None


@dataclass(frozen=True)
class Location:
    """Where an address is: `name` (the function), offset into it, its module."""

    name: str
    offset: int
    module: str | None

    def __str__(self) -> str:
        text = f"{self.name}+{self.offset:#x}"
        return f"{text} [{self.module}]" if self.module else text


class SymbolTable:
    """Text symbols sorted by address; lookup by bisection."""

    def __init__(self, symbols: list[Symbol]):
        self.symbols = sorted(symbols, key=lambda s: s.address)
        self._addresses = [s.address for s in self.symbols]

    def __len__(self) -> int:
        return len(self.symbols)

    def lookup(self, address: int) -> Location | None:
        """The function holding `address`, or None (before the first symbol, or far past the
        last one)."""
        i = bisect.bisect_right(self._addresses, address) - 1
        if i < 0:
            return None
        sym = self.symbols[i]
        offset = address - sym.address
        if i == len(self.symbols) - 1 and offset > MAX_OFFSET:
            return None
        # a module's symbol does not extend past the end of the core kernel's text into a
        # module, nor across modules: the next symbol bounds it already
        return Location(sym.name, offset, sym.module)

    def function(self, address: int) -> str | None:
        """"name+0xoff" (" [module]" for modules) or None."""
        loc = self.lookup(address)
        return str(loc) if loc else None


def parse_kallsyms(text: str) -> SymbolTable:
    """/proc/kallsyms text -> its text symbols. One line naming the fix if the addresses
    are hidden (read it as root with kernel.kptr_restrict < 2) or the text is not kallsyms."""
    symbols: list[Symbol] = []
    seen = 0
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) < 3 or len(parts[1]) != 1:
            raise VirtbenchError(f"not /proc/kallsyms text (line {line[:60]!r}); read the "
                                 "guest's /proc/kallsyms in the same boot as the profile")
        try:
            address = int(parts[0], 16)
        except ValueError:
            raise VirtbenchError(f"not /proc/kallsyms text (address {parts[0][:20]!r}); read "
                                 "the guest's /proc/kallsyms in the same boot") from None
        seen += 1
        if parts[1] not in TEXT_TYPES or address == 0:
            continue
        module = parts[3].strip("[]") if len(parts) > 3 and parts[3].startswith("[") else None
        symbols.append(Symbol(address, parts[2], module))
    if seen and not symbols:
        raise VirtbenchError("/proc/kallsyms shows no addresses (all zero): read it as root "
                             "with sysctl kernel.kptr_restrict=0 or 1")
    if not seen:
        raise VirtbenchError("/proc/kallsyms text is empty; read the guest's /proc/kallsyms "
                             "in the same boot as the profile")
    return SymbolTable(symbols)


def caller_of(table: SymbolTable, hot_address: int, ring: tuple[int, ...]) -> str | None:
    """The caller of a generic accessor: the first function in the TB ring (newest first)
    that is not the hot function, another accessor or a retpoline/return thunk. None if the hot function is not an accessor, or no TB in
    the ring lies outside it."""
    hot = table.lookup(hot_address)
    if hot is None or not is_accessor(hot.name):
        return None
    for pc in ring:
        if not pc:
            continue
        loc = table.lookup(pc)
        if loc is None:
            continue
        if (loc.name, loc.module) != (hot.name, hot.module) and not is_accessor(loc.name) \
                and not is_trampoline(loc.name):
            return loc.name if loc.module is None else f"{loc.name} [{loc.module}]"
    return None


def function_and_caller(table: SymbolTable, address: int,
                        ring: tuple[int, ...] = ()) -> tuple[str, str | None] | None:
    """("function+0xoff [module]", caller or None) for an address, or None if unknown. The
    caller needs the recent TB starts (`ring`, TCG); a KVM exit's RIP alone has none."""
    loc = table.lookup(address)
    if loc is None:
        return None
    return str(loc), (caller_of(table, address, ring) if ring else None)


# x86-64 Linux: the kernel lives in the upper half; an address below the canonical hole is
# user space, which kallsyms does not name
USER_SPACE_END = 0x0000_8000_0000_0000
USER_SPACE = "(user space)"


def function_or_user_space(table: SymbolTable, address: int) -> tuple[str, str | None] | None:
    """function_and_caller() of a 64-bit Linux guest's exit RIP; (USER_SPACE, None) for a user
    address (an interrupt, most often, that came while a program ran); None if unknown."""
    found = function_and_caller(table, address)
    if found is None and address < USER_SPACE_END:
        return USER_SPACE, None
    return found
