"""SELinux access decisions in userspace: seaccess's security server and access vector cache.

Load a binary policy with ``Policy.load(path)``; ask ``check``, ``compute_av`` and the
``compute_*`` calls by context, class and permission names; put an ``Avc`` in front of it for
cached ``has_perm`` checks. The ``*_many`` calls take lists of tuples and release the GIL.
"""

from seaccess._seaccess import (
    DEFAULT_CAPACITY,
    KERNEL_SOCKET_CLASSES,
    AvDecision,
    Avc,
    ContextError,
    Decision,
    Error,
    Permission,
    Policy,
    PolicyError,
    Reason,
    UnknownNameError,
)

__all__ = [
    "DEFAULT_CAPACITY",
    "KERNEL_SOCKET_CLASSES",
    "AvDecision",
    "Avc",
    "ContextError",
    "Decision",
    "Error",
    "Permission",
    "Policy",
    "PolicyError",
    "Reason",
    "UnknownNameError",
]
