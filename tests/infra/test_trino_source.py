"""Each statement names the process that sent it (Trino's `source`): the services, the dashboard
and the command line apart in Trino's query list."""

from __future__ import annotations

import pytest

from poolsight.infra import trino as T

from .isolated import isolated_env, settings_with  # noqa: F401 (the fixture, autouse here)


def test_connections_carry_the_process_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(T, "_SOURCE", ["poolsight"])
    s = settings_with(monkeypatch)
    assert T.trino_connection(s).source == "poolsight"
    T.client_source("poolsight-advice")
    assert T.trino_connection(s).source == "poolsight-advice"
    assert T.trino_connection(s, user="poolsight_reader").source == "poolsight-advice"


def test_an_evaluator_service_names_itself_before_it_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    from poolsight.infra.config import Settings
    from poolsight.infra.evaluator import Evaluator, serve

    monkeypatch.setattr(T, "_SOURCE", ["poolsight"])

    def make(_: Settings) -> Evaluator:
        raise ValueError("stop here")

    assert serve("maintenance", make, []) == 2
    assert T._SOURCE == ["poolsight-maintenance"]
