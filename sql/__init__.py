"""Trino: the table catalogue and its DDL, views, rollups, retention, maintenance, compare."""
