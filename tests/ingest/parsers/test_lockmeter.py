"""lockmeter: values below were read by hand from the LKML mails in the fixture folder."""

from pathlib import Path

import pytest

from ingest.parsers import ParseError, get_parser

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "formats" / "lockmeter"
parse = get_parser("lockmeter")


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def find(result, **keys):
    found = [r for r in result.records if dict(r.keys) == keys]
    assert len(found) == 1, [dict(r.keys) for r in result.records]
    return {m.metric: m.value for m in found[0].measurements}


def test_chen_lock_and_call_sites():
    result = parse(read("lkml-2004-chen-queue-lock.txt"), {})
    lock = find(result, section="SPINLOCKS", lock="net_device->queue_lock")
    assert lock == {
        "util_pct": 7.5, "con_pct": 52.0, "hold_mean_us": 1.7, "hold_max_us": 257.0,
        "wait_mean_us": 175.0, "wait_max_us": 29000.0, "wait_cpu_pct": 4.7,
        "total": 2666132.0, "nowait_pct": 48.0, "spin_pct": 19.0, "reject_pct": 33.1,
    }  # fmt: skip
    no_wait = find(
        result, section="SPINLOCKS", lock="net_device->queue_lock", caller="net_tx_action+0x240"
    )
    assert no_wait["wait_mean_us"] == 0.0  # printed '0us', no MAX and no %CPU
    assert "wait_max_us" not in no_wait and "wait_cpu_pct" not in no_wait
    assert no_wait["reject_pct"] == 78.5
    # after a blank line with no lock row above it: the lock is not known
    orphan = find(result, section="SPINLOCKS", caller="dev_queue_xmit+0x1a0")
    assert orphan["wait_max_us"] == 36000.0
    assert any("line 30" in w for w in result.warnings)


def test_vanmaren_76_column_wrapping_joined():
    result = parse(read("lkml-2001-vanmaren-2.4.8-wrapped.txt"), {})
    assert result.metadata["cpus"] == 4
    assert result.metadata["delta_time_s"] == 72.67
    total = find(result, section="SPINLOCKS", lock="*TOTAL*")
    assert "util_pct" not in total  # lockstat leaves UTIL blank for *TOTAL*
    assert total["hold_max_us"] == 2809000.0  # '2809ms'
    assert total["reject_pct"] == 0.0
    put = find(result, section="SPINLOCKS", lock="kernel_flag", caller="blkdev_put+0xd0")
    assert put["hold_mean_us"] == 553000.0 and put["total"] == 10.0
    multi = find(result, section="SPINLOCKS", lock="getblk+0x2b0")
    assert multi["total"] == 2381262.0
    reads = find(result, section="RWLOCK READS", lock="*TOTAL*")
    assert reads == {
        "con_pct": 0.0, "wait_mean_us": 1.2, "wait_max_us": 1.5, "wait_cpu_pct": 0.0,
        "total": 229513.0, "nowait_pct": 100.0, "spin_pct": 0.0,
    }  # fmt: skip
    writes = find(result, section="RWLOCK WRITES", lock="hash_table_lock", caller="getblk+0x60")
    assert writes["util_pct"] == 35.5 and writes["hold_max_us"] == 3880.0
    assert writes["wait_ww_mean_us"] == 0.0 and writes["spin_ww_pct"] == 0.0
    assert len(result.records) == 44


def test_dale_format_flowed_three_line_rows():
    result = parse(read("lkml-2002-dale-2.5.25-flowed.txt"), {})
    assert result.metadata["cpus"] == 32
    # '  0.00%    0%  0.3us( ' / '0.4us)    0us ... 0% ' / 'qla2x00_cmd_timeout+0x190'
    cut = find(result, section="SPINLOCKS", lock="[0xf7b1e388]", caller="qla2x00_cmd_timeout+0x190")
    assert cut["hold_mean_us"] == 0.3 and cut["hold_max_us"] == 0.4 and cut["total"] == 8.0
    rw = find(result, section="RWLOCK READS", lock="tasklist_lock")
    assert rw["hold_mean_us"] == 2.8 and rw["max_readers"] == 2.0
    assert rw["rdr_busy_max_us"] == 245.0 and rw["wait_max_us"] == 9.0
    caller = find(result, section="RWLOCK READS", lock="tasklist_lock", caller="sig_exit+0x90")
    assert "util_pct" not in caller and caller["con_pct"] == 11.1 and caller["total"] == 9.0
    ww = find(result, section="RWLOCK WRITES", lock="xtime_lock", caller="timer_interrupt+0x10")
    assert ww["wait_ww_mean_us"] == 0.3 and ww["wait_ww_max_us"] == 0.9
    assert ww["spin_ww_pct"] == 0.68
    last = find(result, section="RWLOCK WRITES", lock="do_generic_file_read+0x8c")
    assert last["hold_max_us"] == 230.0 and last["total"] == 9604614.0
    assert any("line 239" in w for w in result.warnings)


def test_linder_labels_per_kernel():
    result = parse(read("lkml-2002-linder-three-kernels.txt"), {})
    assert [dict(r.keys)["label"] for r in result.records] == ["2.4.17"] * 2 + ["2.5.3"] * 2 + [
        "2.5.5"
    ] * 2
    bkl = find(result, label="2.5.5", section="SPINLOCKS", lock="kernel_flag")
    assert bkl["wait_mean_us"] == 1167.0 and bkl["con_pct"] == 0.33
    total = find(result, label="2.5.3", section="SPINLOCKS", lock="*TOTAL*")
    assert total["total"] == 738953957.0


def test_linder_mm1_trailing_space_and_ms_hold():
    result = parse(read("lkml-2003-linder-2.5.67-mm1.txt"), {})
    assert find(result, section="SPINLOCKS", lock="journal_datalist_lock")["wait_mean_us"] == 2598
    vmas = find(result, section="SPINLOCKS", lock="unmap_vmas+0x1c0")
    assert vmas["hold_mean_us"] == 11000.0 and vmas["hold_max_us"] == 49000.0
    assert result.metadata["system"].startswith("Linux w-hlinder2 2.5.67-mm1")


def test_chubb_table_ends_at_prose():
    result = parse(read("lkml-2005-chubb-inode-lock.txt"), {})
    assert len(result.records) == 3
    assert find(result, section="SPINLOCKS", lock="inode_lock")["wait_max_us"] == 8073.0


def test_broken_wrap_is_rejected_naming_the_line():
    # derived from the real vanmaren mail: drop the continuation line of the *TOTAL* row
    lines = read("lkml-2001-vanmaren-2.4.8-wrapped.txt").split("\n")
    assert lines[40] == "0.00%  *TOTAL*"
    del lines[40]
    with pytest.raises(ParseError) as error:
        parse("\n".join(lines), {})
    assert error.value.line == 40


def test_corrupt_duration_is_rejected():
    # derived from the real Chubb mail: '130us' corrupted to '130xs'
    text = read("lkml-2005-chubb-inode-lock.txt").replace("( 130us)", "( 130xs)")
    with pytest.raises(ParseError) as error:
        parse(text, {})
    assert error.value.line == 9


def test_lost_spacing_that_cannot_be_resolved_is_rejected():
    # derived from the Dale mail: the re-wrapped row is given a lock row after it
    text = read("lkml-2002-dale-2.5.25-flowed.txt")
    text = text.replace(
        "qla2x00_cmd_timeout+0x190\n  0.04% 0.02%  4.7us(  11us)  2.2us( 3.0us)(0.00%)     30145"
        "  100% \n0.02%    0%    qla2x00_intr_handler",
        "qla2x00_cmd_timeout+0x190\n",
    ).replace("0.10%    0%    qla2x00_64bit_start_scsi", "0.10%    0%  qla2x00_64bit_start_scsi")
    with pytest.raises(ParseError, match="lock or a call site"):
        parse(text, {})


def test_nothing_to_read():
    with pytest.raises(ParseError, match="no lockstat rows"):
        parse("hello\n", {})
