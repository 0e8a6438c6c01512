"""Evaluation core: one ranking engine, metrics defined once, and the sweep built on them.

- :mod:`~toolsel.eval.engine` fits a scorer per registry (a clone of what the caller passed)
  and ranks every query's candidates in batches;
- :mod:`~toolsel.eval.metrics` defines ``R@k``, ``Success@k``, ``Complete@k``, ``RR`` and
  payload once, vectorised over per-query rank arrays;
- :mod:`~toolsel.eval.sweep` (scorers x top_k, and x selection policies) and
  :mod:`~toolsel.eval.policies` (a selection policy's decisions scored with those metrics);
- :mod:`~toolsel.eval.stats` (bootstrap intervals, paired tests) and
  :mod:`~toolsel.eval.tuning` (scorer variants x styles on dev, and the pick).

The tables the notebooks and commands show are built on this core in :mod:`toolsel.tables`.
"""
