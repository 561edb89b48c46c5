# devctl's on-device self-test. devctl runs it with the user's own Python,
# one process per framework, as
#
#     python -u -c <this script> <framework> <json config>
#
# and reads its events from standard output: one line each, the marker
# "@@devctl-selftest@@ " then a JSON object. It uses the standard library
# and the framework under test only, writes no file and opens no socket.
#
# For the framework (torch, jax or tensorflow), when it is installed, it
# imports it, lists the devices it exposes, and on each device runs small
# operations: allocate, copy host->device and device->host (the round trip
# must give the same numbers back), then matmul, conv1d, linear, layernorm
# and a tiny backward pass in every precision devctl's probe says the device
# has. matmul runs on integer-valued inputs in -1..1, whose products sum
# exactly in float32, float16 and bfloat16, so a wrong answer is caught,
# not only an exception. Each operation is announced before it starts
# ("op_begin"), so when the process hangs or dies the caller knows where.
#
# The config holds: "claims" (backend -> precisions, e.g. {"cpu": ["fp32",
# "bf16"]}), "memory_limit" (bytes of address space, 0 for none) and
# "max_devices" (per backend).
import importlib.util
import json
import sys
import time
import traceback

MARK = "@@devctl-selftest@@ "

# Sizes (devctl's choice): small enough to finish in milliseconds on a CPU,
# shaped like a Whisper encoder's first layers (80 mel channels, a 3-wide
# convolution, a linear layer and a layer norm).
MATMUL_N = 64
CONV_IN, CONV_OUT, CONV_LEN, CONV_K = 80, 256, 300, 3
HIDDEN, SEQ = 256, 300
ALLOC_ELEMS = 1 << 20
ERR_LIMIT = 2000


def emit(**ev):
    sys.stdout.write(MARK + json.dumps(ev, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def error_text(exc):
    # "Type: message", as a traceback's last line shows it: what devctl's
    # log classifier reads.
    s = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return s[:ERR_LIMIT]


def now_ms():
    return time.perf_counter() * 1000.0


class Runner:
    def __init__(self, framework):
        self.framework = framework

    def op(self, device, name, precision, fn):
        emit(ev="op_begin", framework=self.framework, device=device, op=name, precision=precision)
        t0 = now_ms()
        try:
            problem = fn()
        except BaseException as exc:  # noqa: B902 - MemoryError, RecursionError, ...
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            emit(ev="op", framework=self.framework, device=device, op=name, precision=precision,
                 ok=False, ms=round(now_ms() - t0, 3), error=error_text(exc))
            return False
        ms = round(now_ms() - t0, 3)
        if problem:
            emit(ev="op", framework=self.framework, device=device, op=name, precision=precision,
                 ok=False, ms=ms, error="WrongResult: " + problem)
            return False
        emit(ev="op", framework=self.framework, device=device, op=name, precision=precision, ok=True, ms=ms)
        return True


def ternary_matrix(n, seed):
    # Deterministic values in -1..1 without numpy or a framework RNG.
    out = []
    x = seed
    for _ in range(n):
        row = []
        for _ in range(n):
            x = (1103515245 * x + 12345) % 2147483648
            row.append(float((x >> 16) % 3 - 1))
        out.append(row)
    return out


def reference_matmul(a, b):
    n = len(a)
    bt = list(zip(*b))
    return [[sum(a[i][k] * bt[j][k] for k in range(n)) for j in range(n)] for i in range(n)]


def max_diff(got, want):
    worst = 0.0
    for gr, wr in zip(got, want):
        for g, w in zip(gr, wr):
            d = abs(float(g) - w)
            if d != d:  # NaN
                return float("inf")
            if d > worst:
                worst = d
    return worst


A = ternary_matrix(MATMUL_N, 1)
B = ternary_matrix(MATMUL_N, 2)
AB = None


def expected_matmul():
    global AB
    if AB is None:
        AB = reference_matmul(A, B)
    return AB


# ---------------------------------------------------------------- torch

def torch_devices(torch, max_devices):
    devs = [("cpu", "cpu", "CPU")]
    try:
        if torch.cuda.is_available():
            backend = "rocm" if getattr(torch.version, "hip", None) else "cuda"
            for i in range(min(torch.cuda.device_count(), max_devices)):
                devs.append(("cuda:%d" % i, backend, torch.cuda.get_device_name(i)))
    except Exception as exc:
        emit(ev="note", framework="torch", note="torch.cuda: " + error_text(exc))
    try:
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            devs.append(("mps", "mps", "Apple MPS"))
    except Exception as exc:
        emit(ev="note", framework="torch", note="torch.backends.mps: " + error_text(exc))
    try:
        xpu = getattr(torch, "xpu", None)
        if xpu is not None and xpu.is_available():
            for i in range(min(xpu.device_count(), max_devices)):
                devs.append(("xpu:%d" % i, "xpu", xpu.get_device_name(i)))
    except Exception as exc:
        emit(ev="note", framework="torch", note="torch.xpu: " + error_text(exc))
    if importlib.util.find_spec("torch_xla") is not None:
        try:
            import torch_xla.core.xla_model as xm
            devs.append((str(xm.xla_device()), "xla", "PyTorch/XLA device"))
        except Exception as exc:
            emit(ev="note", framework="torch", note="torch_xla: " + error_text(exc))
    return devs


def torch_sync(torch, device):
    kind = device.split(":")[0]
    if kind == "cuda":
        torch.cuda.synchronize(device)
    elif kind == "mps":
        torch.mps.synchronize()
    elif kind == "xpu":
        torch.xpu.synchronize(device)
    elif kind == "xla":
        import torch_xla.core.xla_model as xm
        xm.mark_step()
        xm.wait_device_ops()


def run_torch(run, cfg):
    import torch
    import torch.nn.functional as F
    emit(ev="import", framework="torch", version=str(torch.__version__))
    dtypes = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
    for device, backend, name in torch_devices(torch, cfg["max_devices"]):
        precisions = [p for p in claimed(cfg, backend) if p in dtypes]
        emit(ev="device", framework="torch", device=device, backend=backend, name=name, precisions=precisions)

        def allocate():
            x = torch.zeros(ALLOC_ELEMS, device=device)
            torch_sync(torch, device)
            del x

        host = torch.arange(4096, dtype=torch.float32)
        state = {}

        def h2d():
            state["x"] = host.to(device)
            torch_sync(torch, device)

        def d2h():
            back = state["x"].cpu()
            if not torch.equal(back, host):
                return "the host->device->host round trip changed the values"

        run.op(device, "allocate", "fp32", allocate)
        if run.op(device, "copy_h2d", "fp32", h2d):
            run.op(device, "copy_d2h", "fp32", d2h)
        for p in precisions:
            dt = dtypes[p]

            def matmul():
                a = torch.tensor(A, dtype=dt, device=device)
                b = torch.tensor(B, dtype=dt, device=device)
                c = (a @ b).float().cpu().tolist()
                d = max_diff(c, expected_matmul())
                if d != 0:
                    return "matmul of integer-valued inputs is off by %g" % d

            def conv1d():
                x = torch.randn(1, CONV_IN, CONV_LEN, device=device).to(dt)
                w = torch.randn(CONV_OUT, CONV_IN, CONV_K, device=device).to(dt)
                F.conv1d(x, w, padding=1)
                torch_sync(torch, device)

            def linear():
                x = torch.randn(1, SEQ, HIDDEN, device=device).to(dt)
                w = torch.randn(HIDDEN, HIDDEN, device=device).to(dt)
                b = torch.randn(HIDDEN, device=device).to(dt)
                F.linear(x, w, b)
                torch_sync(torch, device)

            def layernorm():
                x = torch.randn(1, SEQ, HIDDEN, device=device).to(dt)
                F.layer_norm(x, (HIDDEN,))
                torch_sync(torch, device)

            def backward():
                x = torch.randn(1, SEQ, HIDDEN, device=device).to(dt)
                w = torch.randn(HIDDEN, HIDDEN, device=device).to(dt).requires_grad_(True)
                y = F.layer_norm(F.linear(x, w), (HIDDEN,))
                y.float().sum().backward()
                torch_sync(torch, device)
                if w.grad is None:
                    return "no gradient reached the weight"

            for opname, fn in (("matmul", matmul), ("conv1d", conv1d), ("linear", linear),
                               ("layernorm", layernorm), ("backward", backward)):
                run.op(device, opname, p, fn)


# ---------------------------------------------------------------- jax

def jax_backend(d):
    platform = str(getattr(d, "platform", "")).lower()
    if platform == "gpu":
        try:
            version = str(d.client.platform_version).lower()
        except Exception:
            version = ""
        return "rocm" if "rocm" in version else "cuda"
    return {"cuda": "cuda", "rocm": "rocm", "tpu": "xla", "metal": "mps", "cpu": "cpu"}.get(platform, platform)


def run_jax(run, cfg):
    import jax
    import jax.numpy as jnp
    emit(ev="import", framework="jax", version=str(jax.__version__))
    dtypes = {"fp32": jnp.float32, "fp16": jnp.float16, "bf16": jnp.bfloat16}
    devices = []
    seen = set()
    for group in (lambda: jax.devices(), lambda: jax.devices("cpu")):
        try:
            found = group()
        except Exception as exc:
            emit(ev="note", framework="jax", note="jax.devices: " + error_text(exc))
            continue
        for d in found:
            key = (d.platform, d.id)
            if key not in seen:
                seen.add(key)
                devices.append(d)
    per_backend = {}
    for d in devices:
        backend = jax_backend(d)
        per_backend[backend] = per_backend.get(backend, 0) + 1
        if per_backend[backend] > cfg["max_devices"]:
            continue
        device = "%s:%d" % (d.platform, d.id)
        precisions = [p for p in claimed(cfg, backend) if p in dtypes]
        emit(ev="device", framework="jax", device=device, backend=backend,
             name=str(getattr(d, "device_kind", d)), precisions=precisions)
        host = [float(i) for i in range(4096)]
        state = {}

        def allocate():
            with jax.default_device(d):
                jnp.zeros((ALLOC_ELEMS,), jnp.float32).block_until_ready()

        def h2d():
            state["x"] = jax.device_put(jnp.asarray(host, dtype=jnp.float32), d)
            state["x"].block_until_ready()

        def d2h():
            back = [float(v) for v in jax.device_get(state["x"]).tolist()]
            if back != host:
                return "the host->device->host round trip changed the values"

        run.op(device, "allocate", "fp32", allocate)
        if run.op(device, "copy_h2d", "fp32", h2d):
            run.op(device, "copy_d2h", "fp32", d2h)
        key = jax.random.PRNGKey(0)
        for p in precisions:
            dt = dtypes[p]

            def put(shape):
                return jax.device_put(jax.random.normal(key, shape, jnp.float32).astype(dt), d)

            def layer_norm(x):
                x32 = x.astype(jnp.float32)
                m = jnp.mean(x32, axis=-1, keepdims=True)
                v = jnp.var(x32, axis=-1, keepdims=True)
                return ((x32 - m) / jnp.sqrt(v + 1e-5)).astype(x.dtype)

            def matmul():
                a = jax.device_put(jnp.asarray(A, dtype=dt), d)
                b = jax.device_put(jnp.asarray(B, dtype=dt), d)
                c = jax.device_get(jnp.matmul(a, b).astype(jnp.float32)).tolist()
                diff = max_diff(c, expected_matmul())
                if diff != 0:
                    return "matmul of integer-valued inputs is off by %g" % diff

            def conv1d():
                x, w = put((1, CONV_IN, CONV_LEN)), put((CONV_OUT, CONV_IN, CONV_K))
                jax.lax.conv_general_dilated(x, w, (1,), [(1, 1)],
                                             dimension_numbers=("NCH", "OIH", "NCH")).block_until_ready()

            def linear():
                x, w, b = put((1, SEQ, HIDDEN)), put((HIDDEN, HIDDEN)), put((HIDDEN,))
                (x @ w.T + b).block_until_ready()

            def layernorm():
                layer_norm(put((1, SEQ, HIDDEN))).block_until_ready()

            def backward():
                x, w = put((1, SEQ, HIDDEN)), put((HIDDEN, HIDDEN))
                g = jax.grad(lambda w_: jnp.sum(layer_norm(x @ w_.T).astype(jnp.float32)))(w)
                g.block_until_ready()

            for opname, fn in (("matmul", matmul), ("conv1d", conv1d), ("linear", linear),
                               ("layernorm", layernorm), ("backward", backward)):
                run.op(device, opname, p, fn)


# ---------------------------------------------------------------- tensorflow

def run_tensorflow(run, cfg):
    import tensorflow as tf
    emit(ev="import", framework="tensorflow", version=str(tf.__version__))
    dtypes = {"fp32": tf.float32, "fp16": tf.float16, "bf16": tf.bfloat16}
    gpu_backend = "cuda"
    try:
        if tf.test.is_built_with_rocm():
            gpu_backend = "rocm"
    except Exception:
        pass
    per_backend = {}
    for ld in tf.config.list_logical_devices():
        kind = ld.device_type.upper()
        if kind not in ("CPU", "GPU"):
            emit(ev="note", framework="tensorflow", note="device %s (%s) is not tested" % (ld.name, kind))
            continue
        backend = "cpu" if kind == "CPU" else gpu_backend
        per_backend[backend] = per_backend.get(backend, 0) + 1
        if per_backend[backend] > cfg["max_devices"]:
            continue
        device = ld.name
        precisions = [p for p in claimed(cfg, backend) if p in dtypes]
        emit(ev="device", framework="tensorflow", device=device, backend=backend, name=device, precisions=precisions)
        host = [float(i) for i in range(4096)]
        state = {}

        def allocate():
            with tf.device(device):
                tf.zeros((ALLOC_ELEMS,), tf.float32).numpy()

        def h2d():
            with tf.device(device):
                state["x"] = tf.identity(tf.constant(host, dtype=tf.float32))

        def d2h():
            back = [float(v) for v in state["x"].numpy().tolist()]
            if back != host:
                return "the host->device->host round trip changed the values"

        run.op(device, "allocate", "fp32", allocate)
        if run.op(device, "copy_h2d", "fp32", h2d):
            run.op(device, "copy_d2h", "fp32", d2h)
        for p in precisions:
            dt = dtypes[p]

            def rnd(shape):
                return tf.cast(tf.random.normal(shape, seed=1), dt)

            def layer_norm(x):
                x32 = tf.cast(x, tf.float32)
                m, v = tf.nn.moments(x32, axes=[-1], keepdims=True)
                return tf.cast((x32 - m) / tf.sqrt(v + 1e-5), x.dtype)

            def matmul():
                with tf.device(device):
                    c = tf.cast(tf.matmul(tf.constant(A, dtype=dt), tf.constant(B, dtype=dt)), tf.float32)
                    diff = max_diff(c.numpy().tolist(), expected_matmul())
                if diff != 0:
                    return "matmul of integer-valued inputs is off by %g" % diff

            def conv1d():
                with tf.device(device):
                    tf.nn.conv1d(rnd((1, CONV_LEN, CONV_IN)), rnd((CONV_K, CONV_IN, CONV_OUT)), 1, "SAME").numpy()

            def linear():
                with tf.device(device):
                    (tf.matmul(rnd((SEQ, HIDDEN)), rnd((HIDDEN, HIDDEN))) + rnd((HIDDEN,))).numpy()

            def layernorm():
                with tf.device(device):
                    layer_norm(rnd((1, SEQ, HIDDEN))).numpy()

            def backward():
                with tf.device(device):
                    x = rnd((SEQ, HIDDEN))
                    w = tf.Variable(rnd((HIDDEN, HIDDEN)))
                    with tf.GradientTape() as tape:
                        y = tf.reduce_sum(tf.cast(layer_norm(tf.matmul(x, w)), tf.float32))
                    g = tape.gradient(y, w)
                    if g is None:
                        return "no gradient reached the weight"
                    g.numpy()

            for opname, fn in (("matmul", matmul), ("conv1d", conv1d), ("linear", linear),
                               ("layernorm", layernorm), ("backward", backward)):
                run.op(device, opname, p, fn)


# ---------------------------------------------------------------- main

def claimed(cfg, backend):
    got = cfg.get("claims", {}).get(backend)
    if not got:
        return ["fp32"]
    return list(got)


RUNNERS = {"torch": ("torch", run_torch), "jax": ("jax", run_jax), "tensorflow": ("tensorflow", run_tensorflow)}


def limit_memory(limit):
    if limit <= 0:
        return
    try:
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY and hard < limit:
            limit = hard
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
        emit(ev="limit", memory_limit=limit)
    except Exception as exc:
        emit(ev="note", note="memory limit not set: " + error_text(exc))


def main(argv):
    framework = argv[1] if len(argv) > 1 else ""
    cfg = json.loads(argv[2]) if len(argv) > 2 else {}
    cfg.setdefault("max_devices", 8)
    limit_memory(int(cfg.get("memory_limit", 0)))
    emit(ev="start", framework=framework, python=sys.version.split()[0], executable=sys.executable)
    if framework not in RUNNERS:
        emit(ev="done", framework=framework)
        return
    module, fn = RUNNERS[framework]
    if importlib.util.find_spec(module) is None:
        emit(ev="absent", framework=framework)
        emit(ev="done", framework=framework)
        return
    emit(ev="import_begin", framework=framework)
    t0 = now_ms()
    try:
        __import__(module)
    except BaseException as exc:  # noqa: B902 - ImportError, OSError from a missing .so, ...
        if isinstance(exc, KeyboardInterrupt):
            raise
        emit(ev="import_error", framework=framework, ms=round(now_ms() - t0, 3), error=error_text(exc))
        emit(ev="done", framework=framework)
        return
    emit(ev="import_ms", framework=framework, ms=round(now_ms() - t0, 3))
    try:
        fn(Runner(framework), cfg)
    except BaseException as exc:  # noqa: B902
        if isinstance(exc, KeyboardInterrupt):
            raise
        emit(ev="error", framework=framework, error=error_text(exc))
    emit(ev="done", framework=framework)


main(sys.argv)
