"""Every untrusted file the application reads is read within bounds (``models/app/bounded.py``):
only a regular file, of limited size, and a zip archive whose headers promise limited work. A file
that never ends (a device, a FIFO), a folder, an oversized file, an archive whose members add
up to too much or are too many, and one whose header lies are each refused in one line naming
the file -- quickly, and without reading or allocating what they announce."""
import io
import os
import resource
import struct
import zipfile

import numpy as np
import pytest

import minigrad as mg
from models.app import bounded
from models.app.bounded import FileRefused, load_npz, open_bounded, read_bounded

LIMIT = 1 << 20  # max_bytes of these tests' arrays


def npy(array) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def write_zip(path, members: dict, method=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(path, "w", method) as z:
        for name, raw in members.items():
            z.writestr(name, raw)
    return path


def set_sizes(path, size: int) -> None:
    """Make every member's zip headers (local and central) claim ``size`` bytes inflated."""
    data = bytearray(path.read_bytes())
    for signature, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        at = data.find(signature)
        while at >= 0:
            struct.pack_into("<I", data, at + offset, size)
            at = data.find(signature, at + 4)
    path.write_bytes(bytes(data))


def symlink_to(target):
    def make(tmp):
        if not os.path.exists(target):
            pytest.skip(f"no {target} here")
        os.symlink(target, tmp / "x.npz")
        return tmp / "x.npz"
    return make


def fifo(tmp):
    os.mkfifo(tmp / "x.npz")   # nobody ever writes: a blocking open would hang
    return tmp / "x.npz"


def folder(tmp):
    (tmp / "x.npz").mkdir()
    return tmp / "x.npz"


def oversize(tmp):
    with open(tmp / "x.npz", "wb") as f:
        f.truncate(LIMIT + bounded.ARCHIVE_OVERHEAD + 1)  # sparse
    return tmp / "x.npz"


# (how to make the file, what the one-line error says)
NOT_READ = [
    (symlink_to("/dev/zero"), "is a device, not a regular file"),
    (symlink_to("/dev/urandom"), "is a device, not a regular file"),
    (fifo, "is a pipe (FIFO), not a regular file"),
    (folder, "is a folder, not a regular file"),
    (oversize, "above the limit of"),
]


@pytest.mark.parametrize("make, message", NOT_READ, ids=["/dev/zero", "/dev/urandom", "fifo",
                                                          "folder", "oversize"])
def test_a_file_that_is_not_a_bounded_regular_file_is_refused(make, message, tmp_path):
    path = make(tmp_path)
    for read in (lambda: load_npz(path, LIMIT), lambda: read_bounded(path, limit=LIMIT, what="test")):
        with pytest.raises(ValueError) as e:
            read()
        text = str(e.value)
        assert message in text and str(path) in text and "\n" not in text, text


def test_a_symlink_to_a_regular_file_is_read(tmp_path):
    mg.save({"w": np.arange(3.0)}, tmp_path / "real.npz")
    os.symlink(tmp_path / "real.npz", tmp_path / "link.npz")
    np.testing.assert_array_equal(load_npz(tmp_path / "link.npz", LIMIT)["w"], [0.0, 1.0, 2.0])
    assert read_bounded(tmp_path / "link.npz", limit=1 << 20, what="t") == \
        (tmp_path / "real.npz").read_bytes()


def test_read_bounded_reads_up_to_its_limit_and_refuses_one_byte_more(tmp_path):
    (tmp_path / "f").write_bytes(b"x" * 100)
    assert read_bounded(tmp_path / "f", limit=100, what="t") == b"x" * 100
    with pytest.raises(FileRefused, match=r"t: .*f is 100 bytes, above the limit of 99 bytes"):
        read_bounded(tmp_path / "f", limit=99, what="t")
    with pytest.raises(FileNotFoundError, match="t: no such file"):
        open_bounded(tmp_path / "missing", limit=1, what="t")


def test_an_archive_whose_members_add_up_to_too_much_is_refused_from_its_headers(tmp_path):
    """12 members of 256 KiB each, all within a per-array limit of 1 MiB, add up to 3 MiB."""
    members = {f"a{i}.npy": npy(np.zeros(1 << 15)) for i in range(12)}
    path = write_zip(tmp_path / "x.npz", members)
    assert path.stat().st_size < 100_000            # small on disk: zeros deflate well
    with pytest.raises(ValueError, match=r"members inflate to 3,14\d,\d+ bytes, above the limit"):
        load_npz(path, 1 << 20)
    assert len(load_npz(path, 4 << 20)) == 12   # the same file under a larger limit


def test_an_archive_with_too_many_members_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(bounded, "MAX_MEMBERS", 10)
    path = write_zip(tmp_path / "x.npz", {f"a{i}.npy": npy(np.zeros(1)) for i in range(11)})
    with pytest.raises(ValueError, match=r"load: .*x.npz: 11 members, above the limit of 10"):
        load_npz(path, LIMIT)
    monkeypatch.setattr(bounded, "MAX_MEMBERS", 11)
    assert len(load_npz(path, LIMIT)) == 11


@pytest.mark.parametrize("method", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_a_header_that_lies_small_cannot_read_more_than_it_says(method, tmp_path):
    """The zip headers say 1000 bytes; the member inflates to 64 MiB. Reading stops at what
    the header said: refused, and memory does not grow by the 64 MiB."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False,
                                                  "shape": (8 << 20,)})
    path = write_zip(tmp_path / "x.npz", {"a.npy": header.getvalue() + bytes(64 << 20)}, method)
    set_sizes(path, 1000)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(ValueError) as e:
        load_npz(path, 1 << 30)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    text = str(e.value)
    assert "\n" not in text and str(path) in text and ("1,000 bytes its zip header gives" in text
                                                       or "Bad CRC-32" in text), text
    assert grown_kib < 32 << 10, f"peak memory grew by {grown_kib} KiB"


def test_a_header_that_lies_big_is_still_bounded_by_the_limit(tmp_path):
    path = write_zip(tmp_path / "x.npz", {"a.npy": npy(np.ones(4))})
    set_sizes(path, 10 << 20)                        # claims 10 MiB
    with pytest.raises(ValueError, match="members inflate to 10,485,760 bytes, above the limit"):
        load_npz(path, 1 << 20)


def test_arrays_that_add_up_past_max_bytes_are_refused_before_allocation(tmp_path):
    path = write_zip(tmp_path / "x.npz", {"a.npy": npy(np.ones(100)), "b.npy": npy(np.ones(100))})
    assert set(load_npz(path, 1600)) == {"a", "b"}
    with pytest.raises(ValueError, match=r"its arrays hold 1,600 bytes together, above the "
                                         r"limit max_bytes=1,599"):
        load_npz(path, 1599)
