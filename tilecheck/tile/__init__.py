"""The tile-program frontend: a ``T`` namespace mirroring the seed's API, and the program IR.

``T.function`` here traces a function into the bare IR (:class:`Program`). Programs that can be
checked, emitted and run come from the facade's ``T`` (:mod:`tilecheck.program`), which sits above
the checker, the emitter and the simulator; this package imports none of them::

    from tilecheck.program import T     # the only change the seed's root_ratio example needs

    @T.function
    def root_ratio(A: T.Tensor((4, 1), "float32"), Out: T.Tensor((4, 1), "float32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
        r = T.alloc_local((4, 1), "float32", layout="default")
        T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
        ...

    root_ratio.check()      # -> list of Diagnostic (empty: legal)

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
