"""Which data-sharing group a source's records go to (the simulation job's Simulate hands them
to the group operator keyed group|pool): the settings' groups (`jobs submit
--data-sharing-group`, [groups]) first; else, when discovering, the group_name the source's pool
attributes carry (the generator sends it; DB2's -DISPLAY BUFFERPOOL does not show it, so a shop
names its groups in the settings). A learned group's object catalog reaches it only through a
worker that has seen the source's attributes: with --parallelism 1 (the default) every worker
has; with more, catalog records may miss the group, and objects are then taken as the catalog
records that came say (or inferred without any). A member that leaves a learned group stays a
member of its tracker (its LBP keeps its pages) until the job starts afresh. A pool's group
is kept per (source, pool) key in Flink state by the caller (`stored`); what this worker has
learned per source serves the object catalog, whose records are keyed per object."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from poolsight.flink_jobs.group_tracker import MEMBER_NAME

LOG = logging.getLogger(__name__)


@dataclass
class GroupRoutes:
    configured: dict[str, str]  # source -> group, from the settings
    discover: bool = True
    learned: dict[str, str] = field(default_factory=dict)  # source -> group, from its attributes

    @classmethod
    def of(cls, groups: dict[str, list[str]], discover: bool = True) -> GroupRoutes:
        return cls({m: g for g, ms in groups.items() for m in ms}, discover)

    def learns(self, source: str) -> bool:
        """Whether the source's group comes from its attributes records."""
        return self.discover and source not in self.configured

    def attributes(self, source: str, group_name: object, stored: str | None) -> str | None:
        """A pool attributes record of `source`: the key's group from now on (`stored` before)."""
        if not self.learns(source):
            return stored
        named = str(group_name or "").strip() or None
        if named and not MEMBER_NAME.match(named):  # it becomes part of a key: group|pool
            LOG.warning("pool attributes of %s: group_name %r is not a group name; not routed", source, named[:80])
            named = None
        if named:
            self.learned[source] = named
        else:  # left the group (or never in one)
            self.learned.pop(source, None)
        return named

    def of_key(self, source: str, stored: str | None) -> str | None:
        """The group of a (source, pool) key's records."""
        if source in self.configured:
            return self.configured[source]
        if not self.discover or not stored:
            return None
        self.learned[source] = stored  # a key restored after a failover teaches it again
        return stored

    def of_source(self, source: str) -> str | None:
        """The group of a source's object catalog records: as far as this worker knows."""
        if source in self.configured:
            return self.configured[source]
        return self.learned.get(source) if self.discover else None
