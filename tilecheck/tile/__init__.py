"""The tile-program frontend: a ``T`` namespace mirroring the seed's API, and the program IR.

``from tilecheck.tile import T`` is the only change the seed's ``root_ratio`` example needs::

    @T.function
    def root_ratio(A: T.Tensor((4, 1), "float32"), Out: T.Tensor((4, 1), "float32")):
        T.device_entry(launch=T.cuda.LaunchConfig(grid=1, block=1))
        r = T.alloc_local((4, 1), "float32", layout="default")
        T.cuda.tile.apply(T.ptx["ld.global.f32"], r, A)
        ...

    root_ratio.check()      # -> list of Diagnostic (empty: legal)
    root_ratio.validate()   # raises IllegalTileOpError listing every violation
    root_ratio.expand()     # instruction instances in code-generation order

Modules: ``dtypes`` (T.float32 ...), ``exprs`` (scalar expressions), ``layout`` (register
layouts), ``views`` (buffers and strided/dtype views), ``trace`` (tracing state), ``frontend``
(the recording T calls), ``function`` (@T.function), ``ir`` (Program, ApplyCall), ``coords``
(scopes and group axes), ``expand`` (code-generation order), ``namespace`` (T).
"""

from tilecheck.tile.ir import ApplyCall, Instruction, LaunchConfig, Program
from tilecheck.tile.namespace import T
from tilecheck.tile.views import Buffer, View

__all__ = ["T", "Program", "ApplyCall", "Instruction", "LaunchConfig", "Buffer", "View"]
