"""Adapters to agent stacks, each behind its own optional extra.

- :mod:`toolsel.integrations.anthropic` (``toolsel[anthropic]``): a Messages API ``tools``
  array with tool search and deferred loading, and a client-side search handler.
- :mod:`toolsel.integrations.importers`: MCP ``tools/list`` dumps, OpenAI and Anthropic tool
  arrays and LangChain tools into a registry (no SDK needed for the JSON shapes).
- :mod:`toolsel.integrations.benchmarks`: public benchmarks (BFCL, ToolBench, MetaTool, BEIR
  folders) into tools *and* labeled queries; :mod:`toolsel.integrations.sources` detects the
  format of each input and merges mixed sources; :mod:`toolsel.integrations.schemas` maps
  non-JSON-Schema type names (``dict``, ``float``...) with a count.
- :mod:`toolsel.integrations.anthropic_runs`: recorded Messages API runs (request/response
  pairs with tool search), parsed and validated for :mod:`toolsel.tables.runs`.
- :mod:`toolsel.integrations.langchain` (``toolsel[langchain]``): a LangChain v1 agent
  middleware that filters tools per model call and gives the model a ``discover_tools`` tool.

Nothing here is imported by ``import toolsel``; import the submodule you need.
"""
