"""`tl.math`: resolved by the compiler (exp, log, sqrt, ...)."""


def __getattr__(name):
    def f(*args, **kwargs):
        raise RuntimeError(f"tl.math.{name} can only be called inside a @triton.jit kernel")

    return f
