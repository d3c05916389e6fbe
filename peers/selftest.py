"""Self-test of the peer workers through the real protocol.

Spawns `peers/worker.py FRAMEWORK` as a subprocess, as the harness does
(same interpreter as this script, repository root as working directory,
PYTHONUNBUFFERED=1), and talks JSON lines to it:

- numpy_eager on sigmoid_pair 1x127, gelu_pair 37x1537, the five
  controls (add, gelu_ab, softmax, rmsnorm, layernorm) and the three
  autodiff backward graphs (with the suite's tolerances) at 37x1537, with
  the quick protocol (3 samples, 2 ms window, 5 ms warm-up): every response
  well-formed, validated, with the requested phases and sane samples;
- the clean paths: an unknown graph (not_available, worker still alive),
  a target numpy cannot serve (not_available), a malformed line and a bad
  shape (failed, worker still alive), a validation failure forced by zero
  tolerance (failed, validation record, no timing), an unknown framework
  (hello with available false, every request not_available), `quit` and
  end of input (exit status 0);
- the hello line of every other framework (whatever is installed: an
  unavailable one must say why and answer not_available).

`--all` also runs the cases on every available framework (the GPU ones on
cuda). Exits non-zero on any problem; the last line is `N passed, N failed`.
"""

import argparse
import json
import math
import os
import queue
import subprocess
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SEED = [("sigmoid_pair", [1, 127]), ("gelu_pair", [37, 1537])]
CONTROLS = [(g, [37, 1537]) for g in ("add", "gelu_ab", "softmax", "rmsnorm", "layernorm")]
AUTODIFF = [(g, [37, 1537]) for g in ("softmax_grad", "layernorm_grad", "cross_entropy_loss_grad")]
OUTPUTS = {
    "sigmoid_pair": ["value", "grad"],
    "gelu_pair": ["value", "grad"],
    "softmax_grad": ["grad_x"],
    "layernorm_grad": ["grad_x", "grad_w", "grad_b"],
    "cross_entropy_loss_grad": ["grad_x"],
}
# Outputs with one element per column rather than per element.
PER_COLUMN = {"grad_w", "grad_b"}
QUICK = {"samples": 3, "window_ms": 2.0, "warmup_ms": 5.0, "atol": 2e-6, "rtol": 2e-5}
ALL_FRAMEWORKS = ["numpy_eager", "torch_eager", "torch_compile", "jax_jit", "cupy_elementwise"]
GPU_FRAMEWORKS = {"torch_compile", "jax_jit", "cupy_elementwise"}
TIMEOUT_S = float(os.environ.get("PEERS_SELFTEST_TIMEOUT_S", "300"))


class Worker:
    """One worker subprocess, read line by line with a timeout."""

    def __init__(self, framework):
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join("peers", "worker.py"), framework],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None,
            env=env,
            text=True,
            bufsize=1,
        )
        self.lines = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def read(self):
        try:
            line = self.lines.get(timeout=TIMEOUT_S)
        except queue.Empty:
            raise AssertionError(f"no answer within {TIMEOUT_S} s") from None
        if line is None:
            raise AssertionError("the worker closed its stdout without answering")
        try:
            return json.loads(line)
        except ValueError:
            raise AssertionError(f"stdout line is not JSON: {line!r}") from None

    def send_raw(self, text):
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def request(self, obj):
        self.send_raw(json.dumps(obj))
        return self.read()

    def quit(self, eof=False):
        if eof:
            self.proc.stdin.close()
        else:
            self.send_raw(json.dumps({"op": "quit"}))
        rc = self.proc.wait(timeout=60)
        rest = []
        while True:
            line = self.lines.get(timeout=10)
            if line is None:
                break
            rest.append(line)
        assert not rest, f"output after quit: {rest!r}"
        assert rc == 0, f"exit status {rc}"

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class Results:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, label, fn):
        try:
            fn()
        except Exception as exc:  # noqa: BLE001  (AssertionError and broken protocol alike)
            self.failed += 1
            print(f"FAIL {label}: {type(exc).__name__}: {exc}", flush=True)
        else:
            self.passed += 1
            print(f"ok   {label}", flush=True)


def suite_tolerances():
    """Graph -> {"atol", "rtol"} from bench/suite.json."""
    with open(os.path.join(ROOT, "bench", "suite.json"), encoding="utf-8") as f:
        return {g["graph"]: {"atol": g["atol"], "rtol": g["rtol"]} for g in json.load(f)["graphs"]}


TOLERANCES = {g: suite_tolerances()[g] for g, _ in AUTODIFF}


def run_request(graph, shape, target, phases, **over):
    req = {"op": "run", "graph": graph, "shape": shape, "target": target, "phases": phases}
    req.update(QUICK)
    req.update(TOLERANCES.get(graph, {}))
    req.update(over)
    return req


def check_hello(hello, framework):
    assert isinstance(hello, dict), hello
    assert hello.get("hello") == framework, f"hello names {hello.get('hello')!r}"
    assert isinstance(hello.get("available"), bool), "available is not a bool"
    assert isinstance(hello.get("reason"), str), "reason is not a string"
    versions = hello.get("versions")
    assert isinstance(versions, dict) and isinstance(versions.get("python"), str), f"versions: {versions!r}"
    assert isinstance(hello.get("device"), str) and hello["device"], "device missing"
    if not hello["available"]:
        assert hello["reason"], "unavailable without a reason"
    else:
        assert isinstance(versions.get("numpy"), str), "numpy version missing"


def check_ok(resp, graph, shape, target, phases, gpu_events):
    assert resp.get("status") == "ok", f"status {resp.get('status')!r}: {resp.get('reason')}"
    v = resp.get("validation")
    assert isinstance(v, dict) and v.get("pass") is True, f"validation: {v}"
    tol = {**QUICK, **TOLERANCES.get(graph, {})}
    assert v.get("atol") == tol["atol"] and v.get("rtol") == tol["rtol"], "tolerances not echoed"
    names = OUTPUTS.get(graph, ["y"])
    outs = v.get("outputs")
    assert [o.get("name") for o in outs] == names, f"outputs {outs}"
    for o in outs:
        want = shape[1] if o.get("name") in PER_COLUMN else shape[0] * shape[1]
        assert o.get("count") == want, f"count {o.get('count')}"
        assert o.get("pass") is True, o
        for key in ("max_abs", "max_rel"):
            x = o.get(key)
            assert isinstance(x, (int, float)) and math.isfinite(x) and x >= 0, f"{key} = {x!r}"
    measured = resp.get("phases")
    assert isinstance(measured, dict), "phases missing"
    want = [p for p in phases if gpu_events or not p.startswith("gpu_")]
    assert list(measured) == want, f"phases {list(measured)} != {want}"
    batch_n = None
    for p, rec in measured.items():
        n = rec.get("n")
        s = rec.get("samples_s")
        assert isinstance(n, int) and n >= 1, f"{p}: n = {n!r}"
        if p.endswith("_single"):
            assert n == 1, f"{p}: n = {n}"
        else:
            assert batch_n in (None, n), "batch phases disagree on N"
            batch_n = n
        assert isinstance(s, list) and len(s) == QUICK["samples"], f"{p}: samples {s!r}"
        assert all(isinstance(t, float) and t > 0 and math.isfinite(t) for t in s), f"{p}: samples {s!r}"
    k = resp.get("kernels")
    assert k is None or (isinstance(k, int) and k >= 1), f"kernels = {k!r}"
    assert isinstance(resp.get("notes"), str), "notes missing"


def cases_on(results, framework, target, phases, gpu_events):
    w = Worker(framework)
    try:
        hello = w.read()
        results.check(f"{framework}: hello", lambda: check_hello(hello, framework))
        if not hello.get("available") or target not in hello.get("targets", [target]):
            print(f"skip {framework} {target}: not available ({hello.get('reason') or 'no ' + target})", flush=True)
            return
        for graph, shape in SEED + CONTROLS + AUTODIFF:
            label = f"{framework} {target}: {graph} {shape[0]}x{shape[1]}"
            results.check(
                label,
                lambda g=graph, s=shape: check_ok(
                    w.request(run_request(g, s, target, phases)), g, s, target, phases, gpu_events
                ),
            )
        results.check(f"{framework}: quit", w.quit)
    finally:
        w.kill()


def error_paths(results):
    w = Worker("numpy_eager")
    try:
        results.check("numpy_eager: hello", lambda: check_hello(w.read(), "numpy_eager"))

        def unknown_graph():
            r = w.request(run_request("no_such_graph", [2, 3], "cpu", ["e2e_batch"]))
            assert r.get("status") == "not_available" and "no_such_graph" in r.get("reason", ""), r

        def wrong_target():
            r = w.request(run_request("add", [2, 3], "cuda", ["e2e_batch"]))
            assert r.get("status") == "not_available" and r.get("reason"), r

        def malformed():
            w.send_raw("this is not json")
            r = w.read()
            assert r.get("status") == "failed" and r.get("reason"), r
            r = w.request({"op": "dance"})
            assert r.get("status") == "failed" and r.get("reason"), r
            r = w.request(run_request("add", [0, 3], "cpu", ["e2e_batch"]))
            assert r.get("status") == "failed" and "shape" in r.get("reason", ""), r
            r = w.request(run_request("add", [2, 3], "cpu", ["warp_drive"]))
            assert r.get("status") == "failed" and "phase" in r.get("reason", ""), r

        def forced_failure():
            r = w.request(run_request("gelu_pair", [3, 5], "cpu", ["e2e_batch"], atol=0.0, rtol=0.0))
            assert r.get("status") == "failed", r
            v = r.get("validation")
            assert isinstance(v, dict) and v.get("pass") is False, v
            assert len(v.get("outputs", [])) == 2, v
            assert "phases" not in r, "a failed validation must not be timed"

        def still_alive():
            r = w.request(run_request("add", [1, 127], "cpu", ["e2e_single"]))
            check_ok(r, "add", [1, 127], "cpu", ["e2e_single"], False)

        for label, fn in [
            ("unknown graph -> not_available", unknown_graph),
            ("numpy on cuda -> not_available", wrong_target),
            ("malformed requests -> failed", malformed),
            ("zero tolerance -> failed validation, no timing", forced_failure),
            ("worker alive after errors", still_alive),
        ]:
            results.check(f"numpy_eager: {label}", fn)
        results.check("numpy_eager: exit on end of input", lambda: w.quit(eof=True))
    finally:
        w.kill()

    w = Worker("no_such_framework")
    try:

        def unknown_framework():
            hello = w.read()
            check_hello(hello, "no_such_framework")
            assert hello["available"] is False, hello
            r = w.request(run_request("add", [2, 3], "cpu", ["e2e_batch"]))
            assert r.get("status") == "not_available" and r.get("reason"), r
            w.quit()

        results.check("unknown framework -> available false, not_available", unknown_framework)
    finally:
        w.kill()


def hellos(results, frameworks):
    for fw in frameworks:
        w = Worker(fw)
        try:

            def check(fw=fw, w=w):
                hello = w.read()
                check_hello(hello, fw)
                if not hello["available"]:
                    r = w.request(run_request("add", [2, 3], "cuda", ["e2e_batch"]))
                    assert r.get("status") == "not_available", r
                w.quit()

            results.check(f"{fw}: hello well-formed", check)
        finally:
            w.kill()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--all", action="store_true", help="run the cases on every available framework too")
    args = ap.parse_args()
    results = Results()
    cases_on(results, "numpy_eager", "cpu", ["e2e_batch", "e2e_single", "gpu_batch"], gpu_events=False)
    error_paths(results)
    others = [f for f in ALL_FRAMEWORKS if f != "numpy_eager"]
    if args.all:
        cases_on(results, "torch_eager", "cpu", ["e2e_batch", "e2e_single"], gpu_events=False)
        phases = ["gpu_batch", "e2e_batch", "e2e_single", "gpu_single"]
        for fw in others:
            cases_on(results, fw, "cuda", phases, gpu_events=fw != "jax_jit")
    else:
        hellos(results, others)
    print(f"selftest: {results.passed} passed, {results.failed} failed", flush=True)
    return 1 if results.failed else 0


if __name__ == "__main__":
    sys.exit(main())
