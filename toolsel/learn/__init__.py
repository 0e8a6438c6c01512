"""Selection that learns from labeled requests, and honest (cross-fitted) numbers about it.

- :class:`LearnedScorer` (:mod:`~toolsel.learn.model`): any blind scorer plus what the labeled
  requests teach about the tools they name; tools with no labeled request keep their blind
  scores exactly.
- :mod:`~toolsel.learn.signals`: the learned signals (lexical expansion, usage centroids,
  nearest labeled requests, their fusion); :mod:`~toolsel.learn.rule`: the dev rule.
- :mod:`~toolsel.eval.crossfit`: K-fold cross-fitting with group folds
  (:mod:`~toolsel.learn.groups`), and the learning curve.
- :mod:`~toolsel.learn.artifact`: the versioned JSON model file ``toolsel fit`` writes.
"""

from .model import LearnedScorer
from .signals import SETTINGS, Setting

__all__ = ["LearnedScorer", "Setting", "SETTINGS"]
