"""The differential engine: inputs, backends, verdicts, shrinking, reports and campaigns.

* :mod:`.cases` -- deterministic case batches per form (edge-biased, constructed hard cases,
  uniform) and exhaustive chunks;
* :mod:`.backends` -- where a form runs: ``cpu`` (emitted PTX executed by :mod:`tilecheck.sim`),
  ``gpu`` (CuPy: the emitted PTX through the driver JIT, or a cubin from the local ptxas),
  ``host`` (an independent reference: the host's IEEE arithmetic through numpy),
  ``model`` (the model's exact path), ``vectors`` (results recorded in a file);
* :mod:`.verdict` -- the verdict on a batch through :func:`tilecheck.allowed`, written against an
  array namespace so that on a GPU only the disagreements travel back;
* :mod:`.shrink`, :mod:`.findings` -- minimal mismatch reports with a repro command, streamed JSONL;
* :mod:`.campaign` -- resumable fuzzing campaigns and exhaustive sweeps, batch by batch;
* :mod:`.distributed` -- the same campaigns on a Dask cluster (imports Dask only when used);
* :mod:`.vectors` -- the recorded-vector text format.

Nothing here imports CuPy unless the ``gpu`` backend is asked for, nor Dask unless a campaign
runs on a cluster.
"""
