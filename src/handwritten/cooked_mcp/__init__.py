"""cooked-mcp: a single-user MCP server for a Cooked account."""

__version__ = "0.2.0"
#: Where ``--help`` and ``--check`` send an installed user, who has no checkout: the Homepage of
#: [project.urls] in pyproject.toml (tests/distribution/test_distribution_metadata.py checks it).
PROJECT_URL = "https://github.com/cooked-mcp/cooked-mcp"


def docs_url(page: str) -> str:
    return f"{PROJECT_URL}/blob/main/docs/{page}"
