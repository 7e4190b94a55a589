"""The tile-program frontend: a ``T`` namespace mirroring the seed's API, and the program IR.

``T.function`` traces a function into a :class:`Program`, which can be checked, emitted and run.
Those operations belong to the facade (:mod:`tilecheck.program`), which sits above the checker,
the emitter and the simulator; this package imports none of them at load time and looks the facade
up by name when a program's method is called. ``tilecheck.program.T`` is this same ``T``::

    from tilecheck.tile import T        # the seed's import line

    @T.function
    def root_ratio(A: T.Tensor((4, 1), "float32"), Out: T.Tensor((4, 1), "float32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
        r = T.alloc_local((4, 1), "float32", layout="default")
        T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
        ...

    root_ratio.check()                  # -> list of Diagnostic (empty: legal)
    root_ratio.emit(target="sm_90")     # PTX module text
    root_ratio.run(a, out)              # emitted PTX executed on the CPU through the model

Modules: ``dtypes`` (T.float32 ...), ``exprs`` (scalar expressions), ``layout`` (register
layouts), ``views`` (buffers and strided/dtype views), ``trace`` (tracing state), ``frontend``
(the recording T calls), ``function`` (@T.function), ``ir`` (Program, ApplyCall), ``coords``
(scopes and group axes), ``expand`` (code-generation order), ``namespace`` (T), ``diagnostics``
and ``codes`` (the diagnostic record and code table the frontend and the checker share).
"""

from tilecheck.tile.ir import ApplyCall, Instruction, LaunchConfig, Program
from tilecheck.tile.namespace import T
from tilecheck.tile.views import Buffer, View

__all__ = ["T", "Program", "ApplyCall", "Instruction", "LaunchConfig", "Buffer", "View"]
