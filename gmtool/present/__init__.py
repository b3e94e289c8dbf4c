"""Presenters: the only code that formats engine results (rich tables, JSON, MCP text)."""
