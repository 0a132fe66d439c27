"""The table properties the jobs set on the tables they write (common.table_properties)."""

from __future__ import annotations

from poolsight.flink_jobs.common import table_properties


def test_replaced_metadata_files_are_deleted_and_ten_kept() -> None:
    p = table_properties(2.0)
    assert p["write.metadata.delete-after-commit.enabled"] == "true"
    assert p["write.metadata.previous-versions-max"] == "10"


def test_a_commit_that_finds_four_manifests_merges_them() -> None:
    # Iceberg's default is 100: a query opens each manifest its filter may need (infra/config.py).
    assert table_properties(2.0)["commit.manifest.min-count-to-merge"] == "4"


def test_an_empty_commit_comes_every_five_minutes_of_checkpoints_and_never_more_often_than_icebergs() -> None:
    assert table_properties(2.0)["flink.max-continuous-empty-commits"] == "150"
    assert table_properties(5.0)["flink.max-continuous-empty-commits"] == "60"
    assert table_properties(0.5)["flink.max-continuous-empty-commits"] == "600"
    # 60 s checkpoints: 5 would be an empty commit every 5 minutes, but Iceberg's own default of
    # every 10th checkpoint is already rarer.
    assert table_properties(60.0)["flink.max-continuous-empty-commits"] == "10"
