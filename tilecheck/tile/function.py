"""``@T.function``: trace a Python function once into a :class:`~tilecheck.tile.ir.Program`.

Each parameter needs an annotation: ``T.Tensor(shape, dtype)`` (a global tensor; the function
receives a view of it) or a scalar dtype such as ``T.int32`` (the function receives a
:class:`~tilecheck.tile.exprs.ScalarParam`). String annotations (``from __future__ import
annotations``) are evaluated by ``inspect.get_annotations(eval_str=True)``.

Tracing runs the function body with those stand-ins; the T API records into the program. If the
body raises (a NameError, a TypeError from a wrong call), the error becomes a
:class:`~tilecheck.errors.ProgramError` located at the program's line; an exception whose
innermost relevant frame is inside tilecheck is an internal bug and propagates unchanged.
"""

from __future__ import annotations

import inspect

from tilecheck.errors import Location, ProgramError, TilecheckError
from tilecheck.tile.diagnostics import Diagnostic
from tilecheck.tile.dtypes import DType
from tilecheck.tile.exprs import ScalarParam
from tilecheck.tile.ir import Param, Program, TensorType
from tilecheck.tile.trace import Tracer, user_location
from tilecheck.tile.views import Buffer, View


def trace_function(fn) -> Program:
    """Trace ``fn`` once and return its :class:`~tilecheck.tile.ir.Program` (the ``@T.function`` decorator)."""
    if not callable(fn) or not hasattr(fn, "__code__"):
        raise ProgramError(f"@T.function decorates a Python function, got {fn!r}")
    code = fn.__code__
    name = fn.__name__
    location = Location(code.co_filename, _def_line(fn))
    try:
        annotations = inspect.get_annotations(fn, eval_str=True)
    except Exception as exc:  # evaluating the program's annotation text can raise anything
        raise ProgramError(f"cannot evaluate the parameter annotations of {name}: {type(exc).__name__}: {exc}",
                           location) from exc
    tracer = Tracer(name, location)
    args = []
    for index, parameter in enumerate(inspect.signature(fn).parameters.values()):
        if parameter.kind not in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            raise ProgramError(f"parameter {parameter.name!r} of {name}: tile programs take plain positional "
                               "parameters (no *args, **kwargs or keyword-only ones)", location)
        annotation = annotations.get(parameter.name, inspect.Parameter.empty)
        args.append(_parameter(tracer, name, index, parameter.name, annotation, location))
    token = tracer.activate()
    try:
        fn(*args)
    except TilecheckError:
        raise
    except Exception as exc:  # the traced body is the user's code: locate its error, keep ours raw
        where = user_location(exc.__traceback__, code.co_filename)
        if where is None:
            raise
        raise ProgramError(f"tracing {name} failed: {type(exc).__name__}: {exc}", where) from exc
    finally:
        tracer.deactivate(token)
    return Program(name, location, tracer.params, tracer.locals, tracer.launch, tracer.calls, tracer.diagnostics,
                   function=fn)


def _parameter(tracer: Tracer, fname: str, index: int, pname: str, annotation, location: Location):
    if isinstance(annotation, TensorType):
        if annotation.problem:
            tracer.diagnostics.append(Diagnostic(annotation.problem_code, annotation.problem, location,
                                                 subject=f"parameter {pname!r}"))
        shape = annotation.shape or (1,)
        buffer = Buffer(tracer.unique_name(pname), shape, annotation.dtype if annotation.shape else None, "global",
                        ("m",) * len(shape), location, param_index=index)
        view = View.of(buffer)
        tracer.params.append(Param(pname, index, view=view))
        return view
    if isinstance(annotation, DType):
        scalar = ScalarParam(pname, annotation, index)
        tracer.params.append(Param(pname, index, scalar=scalar))
        return scalar
    shown = "no annotation" if annotation is inspect.Parameter.empty else repr(annotation)
    raise ProgramError(f"parameter {pname!r} of {fname} needs an annotation T.Tensor(shape, dtype) or a scalar "
                       f"dtype such as T.int32; found {shown}", location)


def _def_line(fn) -> int:
    """Line of the ``def`` (``co_firstlineno`` points at the first decorator)."""
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):  # no source available (e.g. built in a REPL): use the code object's line
        return fn.__code__.co_firstlineno
    for offset, text in enumerate(lines):
        if text.lstrip().startswith(("def ", "async def ")):
            return first + offset
    return first
