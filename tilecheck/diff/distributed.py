"""Campaigns on a Dask cluster: pure batch jobs run anywhere, results merged in order.

A campaign's batch ``k`` is a pure function of the configuration (:func:`tilecheck.diff.campaign.run_batch`),
so batches can run on any worker in any order. :func:`ordered` is the generic machinery: it
submits jobs of an iterable to a ``distributed.Client`` (a bounded window of them in flight),
buffers results that complete early and yields them strictly in job order. Whoever consumes it
(:class:`tilecheck.diff.campaign.Campaign`, and the compiler-PTX verifier's exhaustive runs,
:mod:`tilecheck.verify.sharded`) therefore writes exactly what a serial run writes, and checkpoints after each
contiguous prefix.

Failures, as Dask handles them:

* a worker that dies mid-batch: the scheduler reruns its batches elsewhere (a batch has no side
  effects, so running it twice is harmless); after ``distributed.scheduler.allowed-failures``
  deaths on one batch Dask gives up and the campaign stops with exit 2 -- its checkpoint covers
  every batch merged, and ``--resume`` continues from there;
* the scheduler or the client going away: the same (exit 2 with the resume hint, or the process
  is gone); nothing after the last checkpoint was written, so nothing is repeated or lost.

GPU clusters: :func:`local_cluster` with ``gpu=True`` starts one worker per device, each pinned to
its device through ``CUDA_VISIBLE_DEVICES`` (``dask_cuda.LocalCUDACluster`` when installed, else a
``SpecCluster`` of nannies with the variable set per worker). On an existing cluster the workers
are pinned by whoever started them (``dask cuda worker`` does it).

Dask is imported only by the functions here, never at import time, and only when ``--workers`` or
``--scheduler`` asks for it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import time
import uuid
from concurrent.futures import CancelledError
from typing import Callable, Iterable, Iterator

from tilecheck.diff.backends import _import_cupy, device_errors
from tilecheck.diff.campaign import (
    BackendSpec,
    BackendView,
    BatchOutcome,
    Config,
    describe_backend,
    run_batch,
    shrink_case,
)
from tilecheck.errors import ClusterError, TilecheckError, UsageError
from tilecheck.spec.contract import ULP_READING_DEFAULT

__all__ = ["ClusterError", "require_dask", "pinned_devices", "local_cluster", "connect", "disconnect", "session",
           "ordered", "dashboard_link", "workers_alive", "DaskExecutor"]

MISSING = "pip install 'tilecheck[dist]'"


def require_dask():
    """The ``distributed`` module, or a :class:`~tilecheck.errors.UsageError` saying how to
    install it."""
    try:
        import dask  # noqa: F401 - distributed needs it; a half install is reported here
        import distributed
    except ImportError as exc:
        raise UsageError(f"--workers and --scheduler run the work on Dask, which is not installed "
                         f"({exc}): {MISSING}") from exc
    return distributed


def pinned_devices(n: int, visible: str | None = None) -> list[str]:
    """``CUDA_VISIBLE_DEVICES`` of each of ``n`` GPU workers, one device each: the first ``n``
    entries of ``visible`` (the parent's ``CUDA_VISIBLE_DEVICES``) or ``0..n-1``."""
    ids = [v.strip() for v in visible.split(",") if v.strip()] if visible else []
    if visible and not ids:
        raise UsageError("CUDA_VISIBLE_DEVICES is set but names no device")
    if not ids:
        ids = [str(i) for i in range(n)]
    if n > len(ids):
        raise UsageError(f"--workers {n} GPU workers, but CUDA_VISIBLE_DEVICES names {len(ids)} device(s)")
    return ids[:n]


def _gpu_count() -> int:
    cupy = _import_cupy()
    with device_errors(cupy, "counting the devices"):  # a CUDA error is exit 2, not a traceback
        return int(cupy.cuda.runtime.getDeviceCount())


def _dashboard_address(dashboard: bool) -> str | None:
    """The dashboard on loopback, on a free port (Dask would take 8787, which another cluster on
    the machine may hold). Dask serves its HTTP routes there even when told no dashboard."""
    return "127.0.0.1:0" if dashboard else None


def local_cluster(workers: int, *, gpu: bool = False, dashboard: bool = True, gpu_count: int | None = None):
    """A Dask cluster on this machine, on loopback: ``workers`` worker processes of one thread,
    or with ``gpu`` one worker per device pinned to it (``gpu_count``: devices, default what CuPy
    sees). This process's environment is left as it was: Dask's nannies write their workers'
    settings (``OMP_NUM_THREADS=1``, ``MKL_NUM_THREADS=1``, ``PYTHONHASHSEED``, ...) into
    ``os.environ``, where every later child process of this one -- ptxas, a ``tilecheck`` run --
    would inherit them and run on one thread."""
    saved = dict(os.environ)
    try:
        return _local_cluster(workers, gpu, dashboard, gpu_count)
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _local_cluster(workers: int, gpu: bool, dashboard: bool, gpu_count: int | None):
    distributed = require_dask()
    if workers < 1:
        raise UsageError("--workers must be at least 1")
    address = _dashboard_address(dashboard)
    # one worker per core: the model's own threads would only compete with the other workers
    env = {"TILECHECK_THREADS": os.environ.get("TILECHECK_THREADS", "1")}
    if not gpu:
        return distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                        dashboard_address=address, env=env)
    count = _gpu_count() if gpu_count is None else gpu_count
    if workers > count:
        raise UsageError(f"--workers {workers} with --backend gpu: one worker per GPU, and {count} GPU(s) are visible")
    devices = pinned_devices(workers, os.environ.get("CUDA_VISIBLE_DEVICES"))
    if importlib.util.find_spec("dask_cuda") is not None:
        from dask_cuda import LocalCUDACluster

        return LocalCUDACluster(CUDA_VISIBLE_DEVICES=",".join(devices), n_workers=workers, threads_per_worker=1,
                                host="127.0.0.1", dashboard_address=address)
    specs = {f"gpu-{dev}": {"cls": distributed.Nanny,
                            "options": {"nthreads": 1, "env": {**env, "CUDA_VISIBLE_DEVICES": dev},
                                        "host": "127.0.0.1"}}
             for dev in devices}
    scheduler = {"cls": distributed.Scheduler,
                 "options": {"host": "127.0.0.1", "dashboard_address": address, "dashboard": address is not None}}
    return distributed.SpecCluster(workers=specs, scheduler=scheduler, name="tilecheck-gpu")


def connect(*, workers: int | None = None, scheduler: str | None = None, gpu: bool = False, dashboard: bool = True,
            timeout: float | None = None):
    """``(client, cluster)``: a client of a new local cluster (``workers``) or of the scheduler at
    ``scheduler`` (``cluster`` None). An unreachable scheduler is a :class:`ClusterError` after
    ``timeout`` seconds (default: Dask's ``distributed.comm.timeouts.connect``)."""
    distributed = require_dask()
    if (workers is None) == (scheduler is None):
        raise UsageError("give one of --workers N and --scheduler ADDRESS")
    if scheduler is not None:
        try:
            options = {} if timeout is None else {"timeout": timeout}
            return distributed.Client(scheduler, **options), None
        except (OSError, TimeoutError, ValueError) as exc:
            raise ClusterError(f"--scheduler {scheduler}: cannot reach the Dask scheduler: {exc}") from exc
    cluster = local_cluster(workers, gpu=gpu, dashboard=dashboard)
    try:
        return distributed.Client(cluster), cluster
    except BaseException:
        cluster.close()
        raise


def disconnect(client, cluster=None) -> None:
    """Close ``client`` and, when given, the local ``cluster``, with short connection timeouts:
    after a lost scheduler Dask would otherwise retry it for its default 30 s."""
    import dask

    with dask.config.set({"distributed.comm.timeouts.connect": "2s"}):
        try:
            client.close()
        finally:
            if cluster is not None:
                cluster.close()


@contextlib.contextmanager
def session(*, workers: int | None = None, scheduler: str | None = None, gpu: bool = False,
            dashboard: bool = True):
    """``with session(workers=2) as client:`` -- :func:`connect`, then :func:`disconnect` however
    the block ends. The hook for other long runs (the compiler-PTX verifier's exhaustive sweeps):
    make the unit of work a module-level pure function of its block, then
    ``for result in ordered(client, fn, jobs): merge(result)`` merges in block order."""
    client, cluster = connect(workers=workers, scheduler=scheduler, gpu=gpu, dashboard=dashboard)
    try:
        yield client
    finally:
        disconnect(client, cluster)


def dashboard_link(client) -> str | None:
    """The address of the Dask dashboard of ``client``'s scheduler, when it serves one (with a
    note when its pages cannot render: they need Bokeh)."""
    try:
        info = client.scheduler_info()
    except (OSError, TimeoutError):
        return None
    if "dashboard" not in info.get("services", {}):
        return None
    if importlib.util.find_spec("bokeh") is None:
        return f"{client.dashboard_link} (its pages need Bokeh: {MISSING})"
    return client.dashboard_link


def workers_alive(client) -> int:
    """Workers connected to ``client``'s scheduler now (0 when it cannot be asked)."""
    try:
        return len(client.nthreads())
    except (OSError, TimeoutError):
        return 0


def _lost(exc: BaseException, what: str) -> ClusterError:
    return ClusterError(f"{what}: the Dask cluster failed ({type(exc).__name__}: {exc}); every batch merged "
                        "before it is checkpointed: continue with --resume")


def ordered(client, fn: Callable, jobs: Iterable[tuple], *, window: int | None = None,
            name: str = "job") -> Iterator:
    """``fn(*job)`` for each job of ``jobs``, computed on ``client``'s workers, yielded in job
    order. At most ``window`` jobs are in flight (default: twice the cluster's threads, at least
    4); results that complete early wait in a buffer. Closing the generator cancels what is still
    in flight. ``fn`` must be a pure, importable function: a job may run twice (a worker died).

    Errors: a :class:`~tilecheck.errors.TilecheckError` raised by ``fn`` is raised here as it is;
    a job whose workers kept dying, or a lost scheduler, is a :class:`ClusterError`.
    """
    distributed = require_dask()
    if window is None:
        try:
            threads = sum(client.nthreads().values())
        except (OSError, TimeoutError) as exc:
            raise _lost(exc, "starting") from exc
        window = max(4, 2 * threads)
    token = uuid.uuid4().hex[:12]
    source = iter(jobs)
    pending: dict[str, tuple[int, object]] = {}
    done: dict[int, object] = {}
    queue = distributed.as_completed()
    submitted = 0
    exhausted = False

    def fill():
        nonlocal submitted, exhausted
        while not exhausted and len(pending) + len(done) < window:
            try:
                job = next(source)
            except StopIteration:
                exhausted = True
                return
            future = client.submit(fn, *job, key=f"tilecheck-{name}-{token}-{submitted}", pure=False)
            pending[future.key] = (submitted, future)
            queue.add(future)
            submitted += 1

    following = 0
    try:
        fill()
        while following < submitted or not exhausted:
            if following in done:
                result = done.pop(following)
                following += 1
                fill()
                yield result
                continue
            if not pending:
                fill()
                if not pending:
                    break
            try:
                future = next(queue)
                index, _ = pending.pop(future.key)
                done[index] = future.result()
            except TilecheckError:
                raise
            except distributed.KilledWorker as exc:
                raise ClusterError(f"{name} {following}: Dask gave up after its workers died repeatedly ({exc}); "
                                   "every batch merged before it is checkpointed: continue with --resume") from exc
            except (CancelledError, OSError, TimeoutError, StopIteration) as exc:
                raise _lost(exc, f"{name} {following}") from exc
    finally:
        if pending and client.status == "running":
            try:
                client.cancel([future for _, future in pending.values()])
            except distributed.client.ClosedClientError:
                pass  # the client closed meanwhile (a lost scheduler): its futures are gone with it


class DaskExecutor:
    """Runs a campaign's batches (and its shrinking) on a Dask client; see :func:`ordered`."""

    def __init__(self, client, spec: BackendSpec, cluster=None, window: int | None = None):
        self.client = client
        self.spec = spec
        self.cluster = cluster
        self.window = window
        self._alive = (0.0, None)

    @classmethod
    def start(cls, spec: BackendSpec, *, workers: int | None = None, scheduler: str | None = None,
              dashboard: bool = True, window: int | None = None) -> "DaskExecutor":
        """A new local cluster of ``workers`` (one per GPU for the gpu backend), or the cluster at
        ``scheduler``."""
        client, cluster = connect(workers=workers, scheduler=scheduler, gpu=spec.name == "gpu", dashboard=dashboard)
        return cls(client, spec, cluster, window)

    @property
    def dashboard(self) -> str | None:
        """The Dask dashboard's address, when the scheduler serves one."""
        return dashboard_link(self.client)

    @property
    def address(self) -> str:
        """The scheduler's address."""
        return str(self.client.scheduler.address)

    def describe(self, form_names) -> BackendView:
        """The backend as built on a worker (the client needs neither a GPU nor the backend)."""
        return next(ordered(self.client, describe_backend, [(self.spec, list(form_names))], window=1,
                            name="describe"))

    def outcomes(self, config: Config, jobs: Iterable[tuple[str, int]]) -> Iterator[BatchOutcome]:
        """Each ``(form, index)`` batch's outcome, computed on the cluster, in order."""
        return ordered(self.client, run_batch, ((self.spec, config, form, k) for form, k in jobs),
                       window=self.window, name="batch")

    def shrink(self, form, operands, result: int, tininess: str, ulp_reading: str = ULP_READING_DEFAULT):
        """Shrink one finding on a worker (a GPU finding needs the GPU)."""
        return next(ordered(self.client, shrink_case,
                            [(self.spec, form.name, tuple(operands), result, tininess, ulp_reading)],
                            window=1, name="shrink"))

    def workers(self) -> int | None:
        """Workers connected to the scheduler (asked at most once a second)."""
        now = time.monotonic()
        if self._alive[1] is None or now - self._alive[0] >= 1.0:
            self._alive = (now, workers_alive(self.client))
        return self._alive[1]

    def close(self) -> None:
        """Close the client, and the local cluster this executor started (:func:`disconnect`)."""
        disconnect(self.client, self.cluster)
