"""Generate the ``argnums`` overloads of ``grad``, ``value_and_grad``, ``jacfwd``, ``jacrev``
and ``hessian`` (``python -m tools.overloads`` rewrites them; ``--check`` fails if stale).

Python's type system cannot index a parameter list by a literal int, so each static
``argnums`` (an int or an increasing tuple of positions ``0..MAX_POSITION``) gets its own
overload; any other ``argnums`` falls back to an honest ``Any`` result.
"""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

MAX_POSITION = 2
ROOT = Path(__file__).resolve().parent.parent
TARGETS = {
    "grad": ROOT / "transforms/compose/_api.py",
    "grad_decorator": ROOT / "transforms/compose/_api.py",
    "value_and_grad": ROOT / "transforms/compose/_api.py",
    "jacfwd": ROOT / "transforms/compose/_jacobian.py",
    "jacrev": ROOT / "transforms/compose/_jacobian.py",
    "hessian": ROOT / "transforms/compose/_jacobian.py",
}


def selections() -> Iterator[int | tuple[int, ...]]:
    positions = range(MAX_POSITION + 1)
    yield from positions
    for size in range(1, MAX_POSITION + 2):
        yield from itertools.combinations(positions, size)


def _literal(sel: int | tuple[int, ...]) -> str:
    if isinstance(sel, int):
        return f"Literal[{sel}]"
    return "tuple[" + ", ".join(f"Literal[{i}]" for i in sel) + "]"


def _overload(name: str, sel: int | tuple[int, ...], aux: bool, arrays: bool = False) -> str:
    """One overload. ``arrays``: every parameter up to the last differentiated one is
    ``Array``, so that a lambda's parameters get a type, and the result is an
    ``ArrayFunction<n>`` Protocol (see its docstring)."""
    hess = name == "hessian"
    jac = name in ("jacfwd", "jacrev", "hessian")
    nums = (sel,) if isinstance(sel, int) else sel
    top = max(nums)
    if arrays:
        params = ["Array"] * (top + 1)
    else:
        params = ["Array" if hess and i in nums else f"A{i}" for i in range(top + 1)]
    concat = f"Concatenate[{', '.join(params)}, P]"
    if hess:
        grads = "Array" if isinstance(sel, int) else _square(len(nums))
    elif isinstance(sel, int):
        grads = params[sel]
    else:
        grads = "tuple[" + ", ".join(params[i] for i in nums) + "]"
    out = "Out" if name == "value_and_grad" else "Leaf"
    returned = f"tuple[{out}, Aux]" if aux else out
    if name == "value_and_grad":
        result = f"tuple[{returned}, {grads}]"
    else:
        result = f"tuple[{grads}, Aux]" if aux else grads
    default = " = 0" if sel == 0 else ""
    args = []
    decorator = name == "grad_decorator"
    if decorator:
        args += ["fun: None = None", "*", f"argnums: {_literal(sel)}{default}"]
    else:
        args += [f"fun: Callable[{concat}, {returned}]", f"argnums: {_literal(sel)}{default}"]
        if aux and sel == 0:
            args.append("*")
    args.append("has_aux: Literal[True]" if aux else "has_aux: Literal[False] = False")
    args.append("holomorphic: bool = False")
    if jac:
        if "*" not in args:
            args.append("*")
        args.append("chunk_size: int | None = None")
        args.append("memory_budget: int | None = None")
    # A differentiated array may be a number too: the transform makes it an array (a list
    # would be a pytree, differentiated leaf by leaf).
    called = ["Leaf" if i in nums and p == "Array" else p for i, p in enumerate(params)]
    ret = f"Callable[Concatenate[{', '.join(called)}, P], {result}]"
    if arrays:  # a Protocol, not a Callable: mypy's Any-ambiguity on a lambda then gives Any
        ret = f"ArrayFunction{top + 1}[{', '.join(called)}, P, {result}]"
    if decorator:
        ret = f"Callable[[Callable[{concat}, {returned}]], {ret}]"
    public = "grad" if decorator else name
    return f"@overload\ndef {public}({', '.join(args)}) -> {ret}: ...\n"


def _square(n: int) -> str:
    row = "tuple[" + ", ".join(["Array"] * n) + "]"
    return "tuple[" + ", ".join([row] * n) + "]"


def _fallback(name: str) -> str:
    """Any other ``argnums`` (or ``has_aux`` not a literal): the parameters are kept, the
    result is not known statically."""
    grads = name in ("grad", "grad_decorator", "value_and_grad")
    fun = "Callable[P, Leaf | tuple[Leaf, Any]]" if grads else "Callable[P, object]"
    jac = ", *, chunk_size: int | None = None, memory_budget: int | None = None"
    if name not in ("jacfwd", "jacrev", "hessian"):
        jac = ""
    # argnums has no default here: a call without it is one of the literal-0 overloads
    # (mypy, seeing a lambda as untyped, would otherwise pick this one)
    tail = f"argnums: int | Sequence[int], has_aux: bool = False, holomorphic: bool = False{jac}"
    if name == "grad_decorator":
        return (
            "@overload\ndef grad(fun: None = None, *, "
            f"{tail}) -> Callable[[{fun}], Callable[P, Any]]: ...\n"
        )
    return f"@overload\ndef {name}(fun: {fun}, {tail}) -> Callable[P, Any]: ...\n"


def block(name: str) -> str:
    lambdas = name not in ("hessian", "grad_decorator")  # (hessian's are always Array)
    items = [
        _overload(name, sel, aux, arrays)
        for aux in (False, True)
        for sel in selections()
        for arrays in ((True, False) if lambdas else (False,))
    ]
    return "".join(items) + _fallback(name)


def _marker(name: str, end: bool) -> str:
    which = "end" if end else "begin"
    return f"# {which} generated overloads: {name} (python -m tools.overloads)\n"


def _format(source: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--stdin-filename", "overloads.py", "-"],
        input=source,
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return done.stdout


def render(text: str, name: str) -> str:
    start, end = _marker(name, False), _marker(name, True)
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        raise SystemExit(f"tools.overloads: no markers for {name}")
    return pattern.sub(lambda _: start + block(name) + end, text)


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for path in sorted(set(TARGETS.values())):
        text = path.read_text()
        new = text
        for name, target in TARGETS.items():
            if target == path:
                new = render(new, name)
        new = _format(new)
        if new != _format(text):  # stale overloads, not mere formatting (ruff's business)
            stale.append(path)
        if not check and new != text:
            path.write_text(new)
    if check and stale:
        print("stale generated overloads in: " + ", ".join(str(p) for p in stale))
        print("run: python -m tools.overloads")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
