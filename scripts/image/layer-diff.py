"""The conversion image's Debian layer: what the conversion root filesystem
(core packages + LibreOffice …) has that the core one lacks or has otherwise.

    python3 layer-diff.py LOWER UPPER ENTRIES WHITEOUTS

Writes ENTRIES: paths ("./usr/…", NUL-separated, sorted) to archive from UPPER:
every entry that is new or differs from LOWER (type, mode, owner, symlink
target or content; times are ignored, the layer clamps them), with the
directories above it. WHITEOUTS: paths of OCI whiteout files (".wh.NAME") for
entries of LOWER that UPPER removed. Stdlib only (the host's python3).
"""
import filecmp
import os
import stat
import sys


def same(lower: str, upper: str) -> bool:
    a, b = os.lstat(lower), os.lstat(upper)
    if stat.S_IFMT(a.st_mode) != stat.S_IFMT(b.st_mode) or a.st_mode != b.st_mode:
        return False
    if (a.st_uid, a.st_gid) != (b.st_uid, b.st_gid):
        return False
    if stat.S_ISLNK(a.st_mode):
        return os.readlink(lower) == os.readlink(upper)
    if stat.S_ISREG(a.st_mode):
        return a.st_size == b.st_size and filecmp.cmp(lower, upper, shallow=False)
    if stat.S_ISCHR(a.st_mode) or stat.S_ISBLK(a.st_mode):
        return a.st_rdev == b.st_rdev
    return True  # directories, fifos, sockets: metadata above


def main(lower_root: str, upper_root: str, entries_file: str, whiteouts_file: str) -> None:
    entries: set[str] = set()
    whiteouts: list[str] = []
    for directory, dirs, files in os.walk(upper_root):
        rel_dir = os.path.relpath(directory, upper_root)
        for name in dirs + files:
            rel = os.path.normpath(os.path.join(rel_dir, name))
            lower = os.path.join(lower_root, rel)
            if os.path.lexists(lower) and same(lower, os.path.join(upper_root, rel)):
                continue
            entries.add(rel)
            parent = os.path.dirname(rel)
            while parent and parent not in entries:
                entries.add(parent)
                parent = os.path.dirname(parent)
        # a symlink to a directory is an entry above, not walked into
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(directory, d))]
    for directory, dirs, files in os.walk(lower_root):
        rel_dir = os.path.relpath(directory, lower_root)
        gone = []
        for name in dirs + files:
            rel = os.path.normpath(os.path.join(rel_dir, name))
            if not os.path.lexists(os.path.join(upper_root, rel)):
                whiteouts.append(os.path.join(os.path.dirname(rel), ".wh." + name))
                gone.append(name)
        # below a removed directory, its whiteout covers everything
        dirs[:] = [d for d in dirs if d not in gone and not os.path.islink(os.path.join(directory, d))]
    with open(entries_file, "wb") as out:
        out.write(b"".join(("./" + e).encode() + b"\0" for e in sorted(entries)))
    with open(whiteouts_file, "wb") as out:
        out.write(b"".join(("./" + w).encode() + b"\0" for w in sorted(whiteouts)))
    print(f"layer-diff: {len(entries)} entries, {len(whiteouts)} whiteouts", file=sys.stderr)


if __name__ == "__main__":
    main(*sys.argv[1:5])
