"""Which group a source's records go to: the settings first, else the group its pool attributes
name (when discovering), kept per key; the object catalog by what the worker learned."""

from __future__ import annotations

from poolsight.flink_jobs.group_routes import GroupRoutes


def test_the_settings_win_over_what_the_attributes_say() -> None:
    r = GroupRoutes.of({"PLEX": ["DB2A", "DB2B"]})
    assert r.attributes("DB2A", "OTHER", None) is None  # the key keeps no group of its own
    assert (r.of_key("DB2A", None), r.of_source("DB2B")) == ("PLEX", "PLEX")


def test_a_group_named_by_the_attributes_is_learned_and_left() -> None:
    r = GroupRoutes.of({})
    assert r.of_key("DB2C", None) is None and r.of_source("DB2C") is None
    stored = r.attributes("DB2C", " DSG2 ", None)
    assert stored == "DSG2" and r.of_key("DB2C", stored) == "DSG2" and r.of_source("DB2C") == "DSG2"
    stored = r.attributes("DB2C", None, stored)  # left the group
    assert stored is None and r.of_key("DB2C", stored) is None and r.of_source("DB2C") is None


def test_a_restored_key_teaches_its_source_again_and_discovery_can_be_off() -> None:
    r = GroupRoutes.of({})
    assert r.of_source("DB2D") is None
    assert r.of_key("DB2D", "DSG3") == "DSG3" and r.of_source("DB2D") == "DSG3"
    off = GroupRoutes.of({"PLEX": ["DB2A"]}, discover=False)
    assert off.attributes("DB2D", "DSG3", None) is None and off.of_key("DB2D", "DSG3") is None
    assert off.of_source("DB2D") is None and off.of_key("DB2A", None) == "PLEX"


def test_a_group_name_that_cannot_be_a_key_is_not_routed() -> None:
    r = GroupRoutes.of({})
    assert r.attributes("DB2E", "G|BP9", None) is None and r.of_source("DB2E") is None
    assert r.attributes("DB2E", "x" * 65, None) is None
