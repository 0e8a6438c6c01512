"""Evaluation: one ranking engine, metrics defined once, and the tables built on them.

- :mod:`~toolsel.eval.engine` fits a scorer per registry (a clone of what the caller passed)
  and ranks every query's candidates in batches;
- :mod:`~toolsel.eval.metrics` defines ``R@k``, ``Success@k``, ``Complete@k``, ``RR`` and
  payload once, vectorised over per-query rank arrays;
- table builders: :mod:`~toolsel.eval.sweep` (scorers x top_k, and x selection policies),
  :mod:`~toolsel.eval.discovery` (multi-tool requests, recall vs loaded noise),
  :mod:`~toolsel.eval.compare` (two registry versions), :mod:`~toolsel.eval.compare_styles`,
  :mod:`~toolsel.eval.failure_modes`, :mod:`~toolsel.eval.conversations` and
  :mod:`~toolsel.eval.cost` (multi-turn replays and their input cost),
  :mod:`~toolsel.eval.runs` (recorded agent runs),
  :mod:`~toolsel.eval.scenario` and :mod:`~toolsel.eval.replication` (the article's numbers),
  :mod:`~toolsel.eval.stats` (bootstrap intervals, paired tests),
  :mod:`~toolsel.eval.tuning` (scorer variants × styles on dev, and the pick), and
  :mod:`~toolsel.eval.benchmark` (speed and memory).
"""
