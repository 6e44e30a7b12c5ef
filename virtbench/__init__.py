"""virtbench: what does virtualization cost me, and why?"""

__version__ = "0.1.0"
