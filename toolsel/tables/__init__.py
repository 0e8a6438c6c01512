"""Table builders on the evaluation core (:mod:`toolsel.eval`): each returns data (DataFrames,
records), never plots or writes Markdown (that is :mod:`toolsel.report`).

- :mod:`~toolsel.tables.discovery` (multi-tool requests, recall vs loaded noise),
  :mod:`~toolsel.tables.compare` (two registry versions), :mod:`~toolsel.tables.compare_styles`
  (scorers across registry styles), :mod:`~toolsel.tables.failure_modes` (why a tool was missed);
- :mod:`~toolsel.tables.conversations` and :mod:`~toolsel.tables.cost` (multi-turn replays and
  their input cost), :mod:`~toolsel.tables.runs` (recorded agent runs);
- :mod:`~toolsel.tables.scenario` and :mod:`~toolsel.tables.replication` (the article's numbers);
- :mod:`~toolsel.tables.labeling` (a registry ranked for labeling a request, the impact of a new
  label) and :mod:`~toolsel.tables.benchmark` (speed and memory).
"""
