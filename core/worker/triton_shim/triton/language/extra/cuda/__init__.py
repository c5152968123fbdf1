from . import libdevice  # noqa: F401
