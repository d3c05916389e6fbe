"""Peer worker for `tile bench`: `python3 peers/worker.py FRAMEWORK`.

FRAMEWORK is one of numpy_eager, torch_eager, torch_compile, jax_jit,
cupy_elementwise. The worker greets with one `hello` line, then answers
each `run` request on stdin with one JSON line on stdout, until `quit` or
end of input. The protocol, inputs, references, validation and the
measurement rules are in common.py; each framework is one module in
frameworks/, imported lazily so that a missing torch never breaks
numpy_eager. An unknown or unavailable framework still greets (with
`available: false` and the reason) and answers every request with
`not_available`.
"""

import importlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import common  # noqa: E402
from frameworks import FRAMEWORKS  # noqa: E402


def load(name):
    """(module or None, hello dict) for a framework name."""
    hello = {
        "hello": name,
        "available": False,
        "reason": "",
        "versions": {"python": common.python_version(), "numpy": common.numpy_version()},
        "device": common.cpu_model(),
        "targets": [],
    }
    if name not in FRAMEWORKS:
        hello["reason"] = f"unknown framework {name!r}; known: {sorted(FRAMEWORKS)}"
        return None, hello
    try:
        module = importlib.import_module(f"frameworks.{name}")
    except Exception as exc:  # noqa: BLE001
        hello["reason"] = f"cannot load the {name} worker: {common.error_summary(exc)}"
        return None, hello
    try:
        info = module.probe()
    except Exception as exc:  # noqa: BLE001
        info = {"available": False, "reason": f"probe failed: {common.error_summary(exc)}"}
    versions = dict(hello["versions"])
    versions.update({k: v for k, v in (info.get("versions") or {}).items() if v is not None})
    hello.update({k: v for k, v in info.items() if k != "versions"})
    hello["versions"] = versions
    hello["hello"] = name
    hello["available"] = bool(hello.get("available"))
    hello.setdefault("reason", "")
    if hello["available"] and common.numpy_version() is None:
        hello["available"] = False
        hello["reason"] = "numpy is not importable (needed for inputs and validation)"
    return module, hello


def main(argv):
    channel = common.Channel()
    name = argv[1] if len(argv) > 1 else ""
    module, hello = load(name)
    if not hello["available"]:
        common.log(f"{name}: not available: {hello['reason']}")
    channel.send(hello)
    while True:
        line = sys.stdin.readline()
        if not line:
            break  # EOF
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
        except ValueError as exc:
            channel.send({"status": "failed", "reason": f"bad request: not JSON ({exc})"})
            continue
        op = req.get("op") if isinstance(req, dict) else None
        if op == "quit":
            break
        if op != "run":
            channel.send({"status": "failed", "reason": f"bad request: unknown op {op!r} (known: run, quit)"})
            continue
        if module is None:
            channel.send({"status": "not_available", "reason": hello["reason"]})
            continue
        channel.send(common.handle_request(module, hello, req))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (BrokenPipeError, KeyboardInterrupt):
        # The harness went away: nothing left to answer.
        try:
            sys.stderr.close()
        finally:
            os._exit(0)
