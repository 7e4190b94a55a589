"""CUDA C++ rendering of planned tile programs, for users who embed the instructions in their kernels.

One ``__forceinline__ __device__`` helper per form used, whose body is a single ``asm volatile``
statement (the T.ptx convention, ``reference/tile-api.md`` §1.7 and §3): destinations are C++
references bound ``"="``, sources follow in PTX operand order, addresses are ``uint64_t`` global
addresses bound ``"l"`` (ld/st add a ``"memory"`` clobber). Carriers by PTX register type:

=================================  ========  ============
register type                      letter    C carrier
=================================  ========  ============
f32                                ``f``     float
f64                                ``d``     double
b16 (f16, bf16)                    ``h``     uint16_t
b32 / u32 (f16x2, bf16x2) / s32    ``r``     uint32_t / int32_t
b64 / u64 (f32x2) / s64            ``l``     uint64_t / int64_t
=================================  ========  ============

Predicated calls use ``<helper>_pred_undef`` (destination ``"="``: inactive results undefined) or,
with ``preserve_dst=True``, ``<helper>_pred_keep`` (destination ``"+"``: the old value stays live);
both take a trailing ``uint32_t pred`` and test it inside the asm block
(``{ .reg .pred p; setp.ne.b32 p, %N, 0; @p <instr>; }``): CUDA has no predicate constraint.

The ``__global__`` kernel mirrors the PTX one: the same parameters (tensors as pointers), one local
variable per register cell (its carrier type; a value of another type is passed through a bit pun
such as ``__uint_as_float``, never a conversion), and one helper call per instruction step.
"""

from __future__ import annotations

from tilecheck.emit.common import DECLARATION_ORDER, EmitError
from tilecheck.emit.plan import CallPlan, KernelPlan, MemoryOperand, ScalarOperand
from tilecheck.emit.ptx import GENERATED
from tilecheck.spec.types import PTX_TYPES
from tilecheck.tile.exprs import BinOp, Compare, Const, ScalarParam, ThreadIndex
from tilecheck.tile.scalars import BOOL, BOOL_OPS, expr_dtype, literal_value, operand_dtype

CARRIER = {t.name: (t.c_type, t.constraint) for t in PTX_TYPES.values() if t.constraint}
"""PTX register type -> (C carrier type, inline-asm constraint letter)."""

CELL_TYPE = {cls: PTX_TYPES[cls].c_type for cls in DECLARATION_ORDER if cls != "pred"}
"""Register class -> the C type of a kernel-local cell of that class."""
PARAM_C_TYPE = {"bool": "bool", "int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "uint16": "uint16_t",
                "float16": "uint16_t", "bfloat16": "uint16_t", "int32": "int32_t", "uint32": "uint32_t",
                "float32": "float", "int64": "int64_t", "uint64": "uint64_t", "float64": "double"}
INT_C_TYPE = {("int", 8): "int8_t", ("int", 16): "int16_t", ("int", 32): "int32_t", ("int", 64): "int64_t",
              ("uint", 8): "uint8_t", ("uint", 16): "uint16_t", ("uint", 32): "uint32_t", ("uint", 64): "uint64_t"}
_WIDTH = {"float": 32, "double": 64, "uint16_t": 16, "int16_t": 16, "uint32_t": 32, "int32_t": 32, "uint64_t": 64,
          "int64_t": 64}
_KEYWORDS = {"auto", "bool", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
             "enum", "extern", "float", "for", "goto", "if", "int", "long", "register", "return", "short",
             "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile",
             "while", "class", "delete", "new", "this", "template", "namespace", "operator", "private",
             "public", "protected", "virtual", "friend", "inline", "true", "false", "asm", "threadIdx",
             "blockIdx", "blockDim", "gridDim", "warpSize"}

PRELUDE = """#ifdef __CUDACC_RTC__
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
#else
#include <cstdint>
#endif"""

FLOOR_HELPERS = """__forceinline__ __device__ int32_t tc_floordiv_s32(int32_t a, int32_t b) {
    int32_t q = a / b;
    return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}
__forceinline__ __device__ int32_t tc_floormod_s32(int32_t a, int32_t b) {
    int32_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
__forceinline__ __device__ int64_t tc_floordiv_s64(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}
__forceinline__ __device__ int64_t tc_floormod_s64(int64_t a, int64_t b) {
    int64_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}"""


def helper_name(form_name: str, variant: str = "") -> str:
    """``div.rn.f32`` -> ``tc_div_rn_f32`` (+ ``_pred_undef`` / ``_pred_keep``)."""
    return "tc_" + form_name.replace(".", "_") + variant


def form_helper(form, variant: str = "") -> str:
    """The ``__forceinline__ __device__`` helper of one form; ``variant`` is ``""``,
    ``"_pred_undef"`` or ``"_pred_keep"``."""
    outputs, inputs, pieces, params = [], [], [], []
    for spec in form.operands:
        if spec.role == "addr":
            params.append(f"uint64_t {spec.name}")
            inputs.append((spec.name, "l"))
            pieces.append(("addr", [spec.name]))
            continue
        ctype, letter = CARRIER[spec.register_type]
        names = [spec.name] if spec.registers == 1 else [f"{spec.name}{j}" for j in range(spec.registers)]
        for n in names:
            if spec.role == "dst":
                params.append(f"{ctype} &{n}")
                outputs.append((n, letter))
            else:
                params.append(f"{ctype} {n}")
                inputs.append((n, letter))
        pieces.append(("vec" if spec.registers > 1 else "reg", names))
    number = {n: i for i, (n, _) in enumerate(outputs + inputs)}
    operand_texts = []
    for kind, names in pieces:
        refs = [f"%{number[n]}" for n in names]
        operand_texts.append(f"[{refs[0]}]" if kind == "addr" else "{" + ", ".join(refs) + "}" if kind == "vec"
                             else refs[0])
    instruction = f"{form.name} {', '.join(operand_texts)};"
    out_mode = "+" if variant == "_pred_keep" else "="
    if variant:
        params.append("uint32_t pred")
        inputs.append(("pred", "r"))
        instruction = (f"{{ .reg .pred p; setp.ne.b32 p, %{len(outputs) + len(inputs) - 1}, 0; "
                       f"@p {instruction} }}")
    out_list = ", ".join(f'"{out_mode}{c}"({n})' for n, c in outputs)
    in_list = ", ".join(f'"{c}"({n})' for n, c in inputs)
    clobber = ' : "memory"' if form.kind == "memory" else ""
    colon_outputs = f" : {out_list}" if out_list else " :"
    return (f"__forceinline__ __device__ void {helper_name(form.name, variant)}({', '.join(params)}) {{\n"
            f"    asm volatile(\"{instruction}\"{colon_outputs} : {in_list}{clobber});\n}}")


def pun(expr: str, src: str, dst: str) -> str:
    """``expr`` of C type ``src`` reinterpreted (bits unchanged) as C type ``dst``."""
    if src == dst:
        return expr
    if _WIDTH.get(src) != _WIDTH.get(dst):
        raise EmitError(f"cannot reinterpret {src} as {dst}: different widths")
    if dst == "float":
        return f"__{'int' if src == 'int32_t' else 'uint'}_as_float({expr})"
    if dst == "double":
        return f"__longlong_as_double((long long)({expr}))"
    if src == "float":
        return f"({dst})__float_as_uint({expr})"
    if src == "double":
        return f"({dst})__double_as_longlong({expr})"
    return f"({dst})({expr})"


def literal(bits: int, ctype: str) -> str:
    """A C expression of type ``ctype`` holding exactly ``bits``."""
    width = _WIDTH[ctype]
    text = f"0x{bits & ((1 << width) - 1):0{width // 4}X}"
    if ctype == "float":
        return f"__uint_as_float({text}u)"
    if ctype == "double":
        return f"__longlong_as_double({text}ll)"
    if width == 64:
        return f"({ctype}){text}ull"
    return f"({ctype}){text}u"


def program_source(plans: list[KernelPlan]) -> str:
    """CUDA C++ source holding the helpers of every form used and one ``__global__`` kernel per plan."""
    if not plans:
        raise EmitError("no program to emit")
    target = plans[0].target
    writers = [_KernelWriter(p) for p in plans]
    kernels = [w.kernel() for w in writers]
    helpers: dict[tuple, None] = {}
    for w in writers:
        helpers.update(dict.fromkeys(w.helpers))
    lines = [f"// {GENERATED}: CUDA C++ for {target}.",
             f"// Compile: nvcc -arch={target} -cubin FILE.cu (or NVRTC); one inline-asm helper per form."]
    for p in plans:
        loc = p.program.location
        where = f"{loc.path.replace(chr(92), '/').rsplit('/', 1)[-1]}:{loc.line}" if loc else "(no location)"
        lines.append(f"// {p.program.name}: {where}; {len(p.calls)} apply call(s)")
    lines += ["", PRELUDE, ""]
    if any(w.need_floor for w in writers):
        lines += [FLOOR_HELPERS, ""]
    for form, variant in helpers:
        lines += [form_helper(form, variant), ""]
    for k in kernels:
        lines += k + [""]
    return "\n".join(lines).rstrip("\n") + "\n"


class _KernelWriter:
    def __init__(self, plan: KernelPlan):
        self.plan = plan
        self.helpers: list[tuple] = []
        self.body: list[str] = []
        self.need_floor = False
        self.temp = 0
        taken = {p.name for p in plan.program.params}
        self.cell_name = {}
        for cell in plan.cells:
            name = f"{cell.buffer.name}_{cell.index}"
            while name in taken or name in _KEYWORDS or name.startswith("tc_"):
                name += "_"
            taken.add(name)
            self.cell_name[cell] = name
        self.index_names: dict[str, str] = {}

    def _new_temp(self) -> str:
        self.temp += 1
        return f"tc_v{self.temp}"

    def kernel(self) -> list[str]:
        """The ``__global__`` kernel's lines (collects the helpers it uses in ``self.helpers``)."""
        program = self.plan.program
        params = []
        for p in program.params:
            if p.is_tensor:
                params.append(f"{PARAM_C_TYPE[p.view.buffer.dtype.name]} *{p.name}")
            else:
                params.append(f"{PARAM_C_TYPE[p.scalar.dtype.name]} {p.name}")
        block = tuple(self.plan.launch.block) + (1,) * (3 - len(self.plan.launch.block))
        threads = block[0] * block[1] * block[2]
        head = [f'extern "C" __global__ void __launch_bounds__({threads}) {program.name}({", ".join(params)})', "{"]
        self.index_names = {"thread": "tc_t", "lane": "(tc_t & 31)", "warp": "(tc_t >> 5)",
                            "warp_in_cta": "(tc_t >> 5)", "warp_in_group": "((tc_t >> 5) & 3)"}
        for call in self.plan.calls:
            self._call(call)
        decls = []
        used = {op.param for c in self.plan.calls for s in c.steps for op in s.operands if isinstance(op, MemoryOperand)}
        for p in self.plan.tensor_params:
            if p in used:
                decls.append(f"const uint64_t tc_g_{p.name} = (uint64_t)__cvta_generic_to_global({p.name});")
        if any("tc_t" in line for line in self.body):
            x, y = block[0], block[1]
            decls.append(f"const int32_t tc_t = (int32_t)(threadIdx.x + {x}u * (threadIdx.y + {y}u * threadIdx.z));")
        by_type: dict[str, list[str]] = {}
        for cell in self.plan.cells:
            by_type.setdefault(CELL_TYPE[cell.cls], []).append(self.cell_name[cell])
        for ctype, names in by_type.items():
            # registers start at zero here (PTX registers are undefined until written; the
            # checker guarantees every value read was written)
            decls.append(f"{ctype} {' = 0, '.join(names)} = 0;")
        return head + ["    " + d for d in decls] + [("    " + b) if b else "" for b in self.body] + ["}"]

    def _call(self, call: CallPlan) -> None:
        variant = ""
        if call.pred is not None:
            variant = "_pred_keep" if call.preserve else "_pred_undef"
        key = (call.form, variant)
        if key not in self.helpers:
            self.helpers.append(key)
        n = len(call.steps)
        self.body.append("")
        self.body.append(f"// {call.location_text}: apply call {call.call.index}, scope {call.scope}, {n} instruction(s)")
        pred = ""
        if call.pred is not None:
            pred = f"tc_p{call.call.index}"
            self.body.append(f"const uint32_t {pred} = {self._pred(call.pred)};")
        bases = {}
        for address in call.addresses:
            if not address.strides:
                continue  # the same address for every thread: use the tensor's base directly
            name = f"tc_a{call.call.index}_{address.operand}"
            terms = " + ".join(f"(int64_t){self.index_names[axis]} * {stride}" for axis, stride in address.strides)
            base = f"tc_g_{address.param.name}"
            self.body.append(f"const uint64_t {name} = {base} + (uint64_t)({terms});")
            bases[address.operand] = name
        for step in call.steps:
            self._step(call, step, variant, pred, bases)

    def _step(self, call, step, variant, pred, bases) -> None:
        args, before, after = [], [], []
        for i, op in enumerate(step.operands):
            spec = op.spec
            if isinstance(op, MemoryOperand):
                base = bases.get(i, f"tc_g_{op.param.name}")
                args.append(base if op.offset == 0 else f"{base} + {op.offset}")
                continue
            ctype = CARRIER[spec.register_type][0]
            if isinstance(op, ScalarOperand):
                if op.param is not None:
                    args.append(pun(op.param.name, PARAM_C_TYPE[op.param.dtype.name], ctype))
                else:
                    args.append(literal(op.bits, ctype))
                continue
            for access in op.accesses:
                cells = [self.cell_name[c] for c in access.cells]
                cell_types = [CELL_TYPE[c.cls] for c in access.cells]
                if access.direct:
                    value = cells[0]
                    value_type = cell_types[0]
                else:
                    bits = access.width * 8
                    utype = f"uint{bits}_t"
                    value = " | ".join(
                        f"(({utype}){pun(name, t, f'uint{_WIDTH[t]}_t')} << {k * _WIDTH[t]})" if k else
                        f"({utype}){pun(name, t, f'uint{_WIDTH[t]}_t')}"
                        for k, (name, t) in enumerate(zip(cells, cell_types)))
                    value = f"({value})"
                    value_type = utype
                if not op.written:
                    args.append(pun(value, value_type, ctype))
                    continue
                if access.direct and value_type == ctype:
                    args.append(value)
                    continue
                tmp = self._new_temp()
                init = f" = {pun(value, value_type, ctype)}" if variant else ""
                before.append(f"{ctype} {tmp}{init};")
                args.append(tmp)
                if access.direct:
                    after.append(f"{cells[0]} = {pun(tmp, ctype, value_type)};")
                else:
                    raw = pun(tmp, ctype, value_type)
                    for k, (name, t) in enumerate(zip(cells, cell_types)):
                        piece = f"(uint{_WIDTH[t]}_t)({raw} >> {k * _WIDTH[t]})"
                        after.append(f"{name} = {pun(piece, f'uint{_WIDTH[t]}_t', t)};")
        if pred:
            args.append(pred)
        statement = f"{helper_name(call.form.name, variant)}({', '.join(args)});"
        if before or after:
            self.body.append("{")
            self.body.extend("    " + s for s in before + [statement] + after)
            self.body.append("}")
        else:
            self.body.append(statement)

    # ---- pred expressions (same semantics as the PTX lowering) ---------------------------
    def _pred(self, expr) -> str:
        dtype = expr_dtype(expr)
        text = self._expr(expr, dtype)
        if dtype.kind == "float":
            raise EmitError("pred must be a bool or integer value")
        return f"(uint32_t)({text} != 0)" if dtype.kind != "bool" else f"(uint32_t)({text})"

    def _ctype(self, dtype) -> str:
        if dtype.kind == "bool":
            return "bool"
        if dtype.kind == "float":
            if dtype.bits not in (32, 64):
                raise EmitError(f"pred cannot use {dtype} values (only 32/64-bit floats)")
            return "float" if dtype.bits == 32 else "double"
        return INT_C_TYPE[(dtype.kind, dtype.bits)]

    def _expr(self, expr, dtype) -> str:
        if isinstance(expr, Const):
            value = literal_value(expr, dtype, self.plan.formats)
            if dtype.kind == "float":
                return literal(value, self._ctype(dtype))
            if dtype.kind == "bool":
                return "true" if value else "false"
            suffix = "ll" if dtype.bits == 64 else ""
            return f"(({self._ctype(dtype)}){value}{suffix})"
        if isinstance(expr, ScalarParam):
            d = expr.dtype
            if d.kind == "float" and d.bits not in (32, 64):
                raise EmitError(f"pred cannot use the {d} parameter {expr.name!r}")
            return expr.name
        if isinstance(expr, ThreadIndex):
            return {"thread_id": "tc_t", "lane_id": "(tc_t & 31)", "warp_id": "(tc_t >> 5)"}[expr.kind]
        if isinstance(expr, Compare):
            cd = operand_dtype(expr.lhs, expr.rhs)
            a, b = self._expr(expr.lhs, cd), self._expr(expr.rhs, cd)
            if cd.kind == "bool":
                a, b = f"(int)({a})", f"(int)({b})"
            return f"({a} {expr.op} {b})"
        if isinstance(expr, BinOp):
            if expr.op in BOOL_OPS and expr_dtype(expr) is BOOL:
                a = self._bool(expr.lhs)
                b = self._bool(expr.rhs)
                return f"(bool)({a} {expr.op} {b})"
            d = expr_dtype(expr, dtype)
            return self._arith(expr, d)
        raise EmitError(f"cannot render the expression {expr!r} in CUDA C++")

    def _bool(self, expr) -> str:
        d = expr_dtype(expr)
        text = self._expr(expr, d)
        return text if d.kind == "bool" else f"({text} != 0)"

    def _arith(self, expr: BinOp, d) -> str:
        if d.kind not in ("int", "uint"):
            raise EmitError(f"'{expr.op}' on {d} values cannot be rendered (integer arithmetic only)")
        t = self._ctype(d)
        bits = d.bits
        u = "uint64_t" if bits == 64 else "uint32_t"
        a, b = self._expr(expr.lhs, d), self._expr(expr.rhs, d)
        op = expr.op
        if op in ("+", "-", "*"):
            return f"(({t})(({u})({a}) {op} ({u})({b})))"
        if op in ("&", "|", "^"):
            return f"(({t})(({a}) {op} ({b})))"
        if op in ("//", "%"):
            if d.kind == "uint":
                return f"(({t})(({a}) {'/' if op == '//' else '%'} ({b})))"
            self.need_floor = True
            name = f"tc_floor{'div' if op == '//' else 'mod'}_s{64 if bits == 64 else 32}"
            return f"(({t}){name}({a}, {b}))"
        amount = f"(({u})({b}) & {((1 << bits) - 1) if bits < 64 else 0xFFFFFFFFFFFFFFFF}ull)"
        if op == "<<":
            return f"(({t})({amount} >= {bits}u ? 0 : (({u})({a}) << {amount})))"
        if op == ">>":
            if d.kind == "int":
                wide = "int64_t" if bits == 64 else "int32_t"
                return f"(({t})(({wide})({a}) >> ({amount} >= {bits}u ? {bits - 1}u : {amount})))"
            return f"(({t})({amount} >= {bits}u ? 0 : (({u})({a}) >> {amount})))"
        raise EmitError(f"unknown integer operator {op!r}")
