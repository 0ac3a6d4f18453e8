"""Hand-written support for the generated tool package (cooked_mcp_generated).

The generated code keeps only what varies with features/tools.yaml (schemas, models,
the table's rules as data); everything else it needs lives here as ordinary source that
ruff and mypy check. This package never imports the handlers or anything else from
cooked_mcp, so the one-way flow (features -> generated -> handwritten) holds.
"""
