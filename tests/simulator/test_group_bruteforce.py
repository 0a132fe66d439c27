"""The brute-force reference model itself, on tiny traces whose counters are derived by
hand in the comments (one object "T"; pages are numbers; LBP lists are LRU first)."""

from __future__ import annotations

from tests.simulator.group_bruteforce import NAMES, DirEntry, Event, Group, brute_force


def g(m: str, page: int) -> Event:
    return (m, "T", page, 0)


def w(m: str, page: int) -> Event:
    return (m, "T", page, 1)


def counts(**nonzero: int) -> dict[str, int]:
    assert set(nonzero) <= set(NAMES)
    return {k: nonzero.get(k, 0) for k in NAMES}


def test_lbp_hit_nf_no_data_and_a_steal_that_frees_a_directory_entry() -> None:
    # 1 data entry, ratio 2: 2 directory entries. LBP(A) holds 2.
    # A gp1: NF, GBP has no data -> NF no data, disk. Dir [1{A}].
    # A gp1: LBP hit. A gp2: NF no data. Dir [1{A}, 2{A}] (full). LBP(A) [1, 2].
    # A gp3: LBP full, steal 1: A unregistered, nobody left and no data -> entry 1 freed.
    #        NF no data; the directory has room again: no reclaim. Dir [2, 3].
    # A gp2: LBP hit (a hit does not touch the directory: it stays [2, 3]).
    group = Group(["A", "B"], {"A": 2, "B": 2}, data_entries=1, ratio=2)
    group.feed([g("A", 1), g("A", 1), g("A", 2), g("A", 3), g("A", 2)])
    got = group.counters()
    assert got["A"] == counts(getpages=5, lbp_hits=2, sync_reads_nf=3, nf_no_data=3, disk_sync_reads=3)
    assert got["B"] == counts()
    assert list(group.directory) == [("T", 2), ("T", 3)]


def test_directory_reclaims_and_their_xis() -> None:
    # Same GBP (2 directory entries); A and B hold 2 pages each.
    # 1 A gp1: NF no data. Dir [1{A}].
    # 2 B gp1: NF no data (no data entry). Dir [1{A,B}].
    # 3 A gp2: NF no data. Dir [1{A,B}, 2{A}] full. LBP(A) [1, 2].
    # 4 A gp3: steal 1 (B still registered: entry stays). NF no data. No free entry:
    #   reclaim LRU 1 [dir reclaim A], B's buffer 1 invalid [XI reclaims B]. Dir [2{A}, 3{A}].
    # 5 B gp1: invalid -> XI, no data, disk. Register B: reclaim LRU 2 [dir reclaim B],
    #   A's 2 invalid [XI reclaims A]. Dir [3{A}, 1{B}].
    # 6 A gp2: invalid -> XI no data, disk. Reclaim 3 [dir reclaim A], A's own 3 invalid
    #   [XI reclaims A]. Dir [1{B}, 2{A}].
    # 7 A gp3: invalid (LBP(A) [3, 2]) -> XI no data; reclaim 1 [dir reclaim A], B's 1
    #   invalid [XI reclaims B]. Dir [2{A}, 3{A}].
    got = brute_force(
        [g("A", 1), g("B", 1), g("A", 2), g("A", 3), g("B", 1), g("A", 2), g("A", 3)],
        ["A", "B"],
        {"A": 2, "B": 2},
        data_entries=1,
        ratio=2,
    )
    assert got["A"] == counts(
        getpages=5,
        sync_reads_nf=3,
        nf_no_data=3,
        sync_reads_xi=2,
        xi_no_data=2,
        disk_sync_reads=5,
        directory_reclaims=3,
        xi_due_to_reclaims=2,
    )
    assert got["B"] == counts(
        getpages=2,
        sync_reads_nf=1,
        nf_no_data=1,
        sync_reads_xi=1,
        xi_no_data=1,
        disk_sync_reads=2,
        directory_reclaims=1,
        xi_due_to_reclaims=2,
    )
    assert got["total"]["directory_reclaims"] == 4
    assert got["total"]["xi_due_to_reclaims"] == 4
    assert got["total"]["disk_sync_reads"] == 7


def test_a_write_xis_two_members_refreshes_with_data_and_nf_with_data() -> None:
    # 4 data entries, ratio 2 (8 directory entries), GBPOOLT 100: no castout, no reclaim.
    # LBP A 2, B 2, C 1.
    #  1 A gp1, 2 B gp1, 3 C gp1: NF no data each. R(1) = {A, B, C}.
    #  4 A swi1: valid in A. [changed written A]; data entry for 1, changed; B and C
    #    invalidated [XI writes B, C]; R = {A}. Changed 1, not > 4.
    #  5 B gp1, 6 C gp1: invalid -> XI, data returned. R = {A, B, C}.
    #  7 A gp1: LBP hit (the writer's buffer stayed valid).
    #  8 A swi1: [changed written A]; data held already; B, C invalidated again.
    #  9 B swi1: B's buffer is in LBP(B) though invalid: no getpage implied; B writes it,
    #    it is valid again. [changed written B]; A invalidated [XI writes A]; C is not
    #    registered. R = {B}.
    # 10 C gp2: LBP(C) full with 1 (invalid): steal it (C not registered; R(1) = {B} and
    #    data held: entry stays). NF, 2 has no data -> NF no data, disk.
    # 11 C gp1: steal 2 (nobody left, no data: freed). NF, 1 has data -> NF data returned.
    events = [g("A", 1), g("B", 1), g("C", 1), w("A", 1), g("B", 1), g("C", 1), g("A", 1)]
    events += [w("A", 1), w("B", 1), g("C", 2), g("C", 1)]
    group = Group(["A", "B", "C"], {"A": 2, "B": 2, "C": 1}, data_entries=4, ratio=2, gbpoolt=100)
    group.feed(events)
    got = group.counters()
    assert got["A"] == counts(
        getpages=2,
        lbp_hits=1,
        sync_reads_nf=1,
        nf_no_data=1,
        disk_sync_reads=1,
        changed_pages_written=2,
        xi_due_to_writes=1,
    )
    assert got["B"] == counts(
        getpages=2,
        sync_reads_nf=1,
        nf_no_data=1,
        sync_reads_xi=1,
        xi_data_returned=1,
        disk_sync_reads=1,
        changed_pages_written=1,
        xi_due_to_writes=2,
    )
    assert got["C"] == counts(
        getpages=4,
        sync_reads_nf=3,
        nf_no_data=2,
        nf_data_returned=1,
        sync_reads_xi=1,
        xi_data_returned=1,
        disk_sync_reads=2,
        xi_due_to_writes=2,
    )
    assert got["total"] == counts(
        getpages=8,
        lbp_hits=1,
        sync_reads_xi=2,
        xi_data_returned=2,
        sync_reads_nf=5,
        nf_data_returned=1,
        nf_no_data=4,
        disk_sync_reads=4,
        changed_pages_written=3,
        xi_due_to_writes=5,
    )
    assert group.lbp["B"][("T", 1)] is True
    assert group.directory[("T", 1)].registered == {"B", "C"}
    assert list(group.directory) == [("T", 1)]


def test_data_entry_reclaims_follow_the_data_lru_moved_by_reads() -> None:
    # 2 data entries, ratio 2 (4 directory entries), GBPOOLT 30: limit 0.6, so every
    # write casts out at once (1 changed > 0.6) and data entries are clean after it.
    # 1 A swi1: implied getpage (NF no data, disk); [changed written]; data [1]; castout 1.
    # 2 A swi2: the same; data [1, 2]; castout 1.
    # 3 A swi3: the same; data full, LRU clean 1 freed [data entry reclaim A] (its
    #   directory entry stays, R(1) = {A}); data [2, 3]; castout 1.
    # 4 B gp1: NF; 1 has an entry but no data -> NF no data, disk.
    # 5 B gp2: NF data returned; 2's data entry to MRU: data [3, 2].
    # 6 A swi4: implied getpage NF no data (directory 1..4, room). Data full: LRU clean
    #   is 3 (not 2: the read moved it) [data entry reclaim A]; data [2, 4]; castout 1.
    # 7 B gp3: NF; 3's data is gone -> NF no data, disk.
    # 8 B gp2: LBP hit.
    events = [w("A", 1), w("A", 2), w("A", 3), g("B", 1), g("B", 2), w("A", 4), g("B", 3), g("B", 2)]
    got = brute_force(events, ["A", "B"], {"A": 4, "B": 4}, data_entries=2, ratio=2)
    assert got["A"] == counts(
        getpages=4,
        sync_reads_nf=4,
        nf_no_data=4,
        disk_sync_reads=4,
        changed_pages_written=4,
        castout_pages=4,
        data_entry_reclaims=2,
    )
    assert got["B"] == counts(
        getpages=4,
        lbp_hits=1,
        sync_reads_nf=3,
        nf_no_data=2,
        nf_data_returned=1,
        disk_sync_reads=2,
    )


def test_a_failed_write_casts_out_then_reclaims_a_data_entry() -> None:
    # 2 data entries, ratio 2, GBPOOLT 100: no threshold castout (2 changed never > 2).
    # 1 A swi1, 2 A swi2: implied getpages (NF no data); data [1, 2], both changed.
    # 3 A swi3: implied getpage NF no data. Data full and all changed: [writes failed A],
    #   cast out 1 and 2 [castout pages 2]; retry: LRU clean 1 freed [data entry
    #   reclaim A]; data [2, 3]; 3 changed.
    # 4 B gp1: NF, no data (entry kept, data freed) -> disk.
    # 5 B gp2: NF data returned (2 is clean in the GBP).
    # 6 A swi2: valid in A; 2 holds data: becomes changed again; B invalidated [XI writes B].
    # 7 B gp2: XI data returned.
    events = [w("A", 1), w("A", 2), w("A", 3), g("B", 1), g("B", 2), w("A", 2), g("B", 2)]
    group = Group(["A", "B"], {"A": 4, "B": 4}, data_entries=2, ratio=2, gbpoolt=100)
    group.feed(events)
    got = group.counters()
    assert got["A"] == counts(
        getpages=3,
        sync_reads_nf=3,
        nf_no_data=3,
        disk_sync_reads=3,
        changed_pages_written=4,
        writes_failed_no_storage=1,
        castout_pages=2,
        data_entry_reclaims=1,
    )
    assert got["B"] == counts(
        getpages=3,
        sync_reads_nf=2,
        nf_no_data=1,
        nf_data_returned=1,
        sync_reads_xi=1,
        xi_data_returned=1,
        disk_sync_reads=1,
        xi_due_to_writes=1,
    )
    assert sorted(group.changed_pages()) == [("T", 2), ("T", 3)]


def test_gbpoolt_castout_is_strictly_above_the_threshold() -> None:
    # 4 data entries, GBPOOLT 50: cast out when changed pages > 2.
    # 1-2 A swi1, swi2: implied getpages; changed 1, then 2 (= 2, not above): no castout.
    # 3 A swi3: changed 3 > 2: all 3 cast out [castout pages 3].
    # 4 A swi1: valid; its clean data becomes changed: 1 changed, no castout.
    # 5 A swi2, 6 A swi3: 2, then 3 changed -> castout 3.
    events = [w("A", 1), w("A", 2), w("A", 3), w("A", 1), w("A", 2), w("A", 3)]
    group = Group(["A"], {"A": 4}, data_entries=4, ratio=2, gbpoolt=50)
    group.feed(events)
    assert group.counters()["A"] == counts(
        getpages=3, sync_reads_nf=3, nf_no_data=3, disk_sync_reads=3, changed_pages_written=6, castout_pages=6
    )
    assert group.changed_pages() == []
    # GBPOOLT 30 on 10 data entries: 3 changed is exactly 30 %, not above; the 4th casts out.
    group = Group(["A"], {"A": 10}, data_entries=10, ratio=2, gbpoolt=30)
    group.feed([w("A", p) for p in range(3)])
    assert group.counters()["A"]["castout_pages"] == 0
    group.feed([w("A", 3)])
    assert group.counters()["A"]["castout_pages"] == 4


def test_xi_refresh_without_data_after_castout_and_data_reclaim_and_releases_ignored() -> None:
    # 1 data entry, ratio 3 (3 directory entries), GBPOOLT 100.
    # 1 A gp1, 2 B gp1: NF no data. R(1) = {A, B}.
    # 3 B swi1: [changed written B]; data [1] changed; A invalidated [XI writes A]; R = {B}.
    # 4 B release 1: ignored.
    # 5 B swi2: implied getpage NF no data. Data full, all changed: [writes failed B],
    #   castout 1 [castout pages 1]; retry frees 1's data [data entry reclaim B]; data [2].
    # 6 A gp1: invalid -> XI; 1 has no data now -> XI no data, disk. R(1) = {B, A}.
    # 7 A gp2: NF, 2 has (changed) data -> NF data returned.
    events = [g("A", 1), g("B", 1), w("B", 1), ("B", "T", 1, 2), w("B", 2), g("A", 1), g("A", 2)]
    got = brute_force(events, ["A", "B"], {"A": 3, "B": 3}, data_entries=1, ratio=3, gbpoolt=100)
    assert got["A"] == counts(
        getpages=3,
        sync_reads_nf=2,
        nf_no_data=1,
        nf_data_returned=1,
        sync_reads_xi=1,
        xi_no_data=1,
        disk_sync_reads=2,
        xi_due_to_writes=1,
    )
    assert got["B"] == counts(
        getpages=2,
        sync_reads_nf=2,
        nf_no_data=2,
        disk_sync_reads=2,
        changed_pages_written=2,
        writes_failed_no_storage=1,
        castout_pages=1,
        data_entry_reclaims=1,
    )


def test_a_directory_reclaim_skips_changed_entries_and_frees_the_data_entry() -> None:
    # 1 data entry, ratio 2 (2 directory entries), GBPOOLT 100. LBP A 1, B 3.
    # 1 A swi1: implied NF no data; data [1] changed; dir [1{A}].
    # 2 B gp2: NF no data; dir [1{A}, 2{B}] full.
    # 3 B gp3: NF no data; need an entry: LRU 1 is changed, skipped; 2 reclaimed
    #   [dir reclaim B], B's own 2 invalidated [XI reclaims B]. Dir [1{A}, 3{B}].
    # 4 A gp4: LBP(A) full: steal 1 (R empty but data held: stays). NF no data; need an
    #   entry: 1 still changed, skipped; 3 reclaimed [dir reclaim A], B's 3 invalid
    #   [XI reclaims B]. Dir [1{}, 4{A}].
    # 5 B swi1: implied getpage NF, 1 has data -> NF data returned; register B (entry
    #   exists). Write: data held; changed already; nobody else registered.
    #   Dir [4{A}, 1{B}].
    # 6 A gp5: steal 4 (freed: nobody, no data); NF no data; dir [1{B}, 5{A}] (room).
    # 7 B gp6: LBP(B) [2(inv), 3(inv), 1] is full: steal 2 (it has no entry).
    #   NF no data; need an entry: 1 changed skipped, 5 reclaimed [dir reclaim
    #   B], A's 5 invalid [XI reclaims A]. Dir [1{B}, 6{B}].
    events = [w("A", 1), g("B", 2), g("B", 3), g("A", 4), w("B", 1), g("A", 5), g("B", 6)]
    group = Group(["A", "B"], {"A": 1, "B": 3}, data_entries=1, ratio=2, gbpoolt=100)
    group.feed(events)
    got = group.counters()
    assert got["A"] == counts(
        getpages=3,
        sync_reads_nf=3,
        nf_no_data=3,
        disk_sync_reads=3,
        changed_pages_written=1,
        directory_reclaims=1,
        xi_due_to_reclaims=1,
    )
    assert got["B"] == counts(
        getpages=4,
        sync_reads_nf=4,
        nf_no_data=3,
        nf_data_returned=1,
        disk_sync_reads=3,
        changed_pages_written=1,
        directory_reclaims=2,
        xi_due_to_reclaims=2,
    )
    assert list(group.directory) == [("T", 1), ("T", 6)]
    assert list(group.data) == [("T", 1)]


def test_the_steal_of_an_invalid_buffer_frees_an_entry_left_with_nothing() -> None:
    # The module docstring's reading of rule 3. 1 data entry, ratio 5, GBPOOLT 30 (every
    # write cast out at once). LBP A 2, B 1.
    # 1 A gp1, 2 B gp1: NF no data. R(1) = {A, B}.
    # 3 B swi1: data [1], changed then cast out [castout B]; A invalidated [XI writes A].
    # 4 B gp2: steal 1 (R empty, data held: entry stays). NF no data.
    # 5 B swi2: data full, 1 clean: its data freed [data entry reclaim B]; 1's entry stays
    #   with no member and no data. Data [2]; castout.
    # 6 A gp3: LBP(A) [1 (invalid)] has room. NF no data.
    # 7 A gp4: steal 1 (invalid, A not registered): the entry has nobody and no data: freed.
    events = [g("A", 1), g("B", 1), w("B", 1), g("B", 2), w("B", 2), g("A", 3)]
    group = Group(["A", "B"], {"A": 2, "B": 1}, data_entries=1, ratio=5, gbpoolt=30)
    group.feed(events)
    assert list(group.directory) == [("T", 1), ("T", 2), ("T", 3)]
    assert group.directory[("T", 1)] == DirEntry()
    group.feed([g("A", 4)])
    assert list(group.directory) == [("T", 2), ("T", 3), ("T", 4)]
    got = group.counters()
    assert got["A"] == counts(getpages=3, sync_reads_nf=3, nf_no_data=3, disk_sync_reads=3, xi_due_to_writes=1)
    assert got["B"] == counts(
        getpages=2,
        sync_reads_nf=2,
        nf_no_data=2,
        disk_sync_reads=2,
        changed_pages_written=2,
        castout_pages=2,
        data_entry_reclaims=1,
    )


def test_a_write_on_a_buffer_a_reclaim_invalidated_creates_its_directory_entry() -> None:
    # 1 data entry, ratio 2 (2 directory entries), GBPOOLT 100. LBP A 3, B 3.
    # 1 A gp1: NF no data. Dir [1{A}].   2 B gp2: NF no data. Dir [1{A}, 2{B}].
    # 3 B gp3: NF no data; reclaim LRU 1 [dir reclaim B]; A's 1 invalid [XI reclaims A].
    #   Dir [2{B}, 3{B}].
    # 4 A swi1: 1 is in LBP(A), invalid: no getpage; A's copy becomes valid. [changed
    #   written A]; 1 has no entry: rule 5 reclaims LRU 2 [dir reclaim A], B's 2 invalid
    #   [XI reclaims B]; data entry free: data [1], changed. Dir [3{B}, 1{A}].
    # 5 B gp2: invalid -> XI; 2 has no data -> XI no data, disk. Register: reclaim LRU 3
    #   [dir reclaim B], B's own 3 invalid [XI reclaims B]. Dir [1{A}, 2{B}].
    # 6 B gp1: NF, 1 has data -> NF data returned. Dir [2{B}, 1{A, B}].
    # 7 A gp1: LBP hit.
    events = [g("A", 1), g("B", 2), g("B", 3), w("A", 1), g("B", 2), g("B", 1), g("A", 1)]
    group = Group(["A", "B"], {"A": 3, "B": 3}, data_entries=1, ratio=2, gbpoolt=100)
    group.feed(events)
    got = group.counters()
    assert got["A"] == counts(
        getpages=2,
        lbp_hits=1,
        sync_reads_nf=1,
        nf_no_data=1,
        disk_sync_reads=1,
        changed_pages_written=1,
        directory_reclaims=1,
        xi_due_to_reclaims=1,
    )
    assert got["B"] == counts(
        getpages=4,
        sync_reads_nf=3,
        nf_no_data=2,
        nf_data_returned=1,
        sync_reads_xi=1,
        xi_no_data=1,
        disk_sync_reads=3,
        directory_reclaims=2,
        xi_due_to_reclaims=2,
    )
    assert list(group.directory) == [("T", 2), ("T", 1)]
    assert group.directory[("T", 1)] == DirEntry(registered={"A", "B"}, has_data=True, changed=True)
