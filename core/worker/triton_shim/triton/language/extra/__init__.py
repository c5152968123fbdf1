"""`tl.extra.libdevice` / `tl.extra.cuda.libdevice`: resolved by the compiler."""
from . import cuda, libdevice  # noqa: F401
