"""The benchmark as an lm-evaluation-harness task group (lm-eval 0.4.x), and back.

- :mod:`.metrics`: the metrics each task reports, per condition, and where each is read in a
  contstim result (accuracy, SRCS, their standard errors, noise ceilings, normalised accuracy);
- :mod:`.hooks`: what the task YAMLs call: the documents (one per sentence pair, from the
  package's built datasets), ``process_results`` and the aggregations, which evaluate through
  :func:`contstim_bench.driver.evaluate` on the log-probabilities the lm-eval backend returned,
  so an lm-eval run and ``contstim evaluate`` give the same numbers by construction;
- :mod:`.folder`: writes the task folder (``contstim lm-eval tasks``) for the experiments whose
  data is present and the rounds of a datasets folder;
- :mod:`.samples`: ``contstim import lm-eval``: an lm-eval output folder (results JSON and
  ``--log_samples`` samples) into a contstim result file with the run's provenance.
"""
