"""Each case's page and downloads kept from the build that made them, reused while nothing they
were made from has changed.

A case page is a function of the case module's text, the code that runs and renders it (the
harness and this generator), the records it shows (``reports/``, the corpus's other files) and the
machine it ran on (Python, torch and every installed package, the devices, the settings read from
the environment). The key is a hash of all of them: an edited case is executed again, alone; a
change anywhere else (a harness or generator edit, a new record, another torch) executes every case
again, so a reused page is the page a build from nothing would write. Sphinx still renders every
page from scratch. ``--no-cache`` (``make docs FRESH=1``) runs every case and replaces what is kept.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import platform
import shutil
import sys
import tempfile
from pathlib import Path

KEY_FILE = "key"
PAGE = "page.ipynb"
DOWNLOADS = "downloads"
# Settings a case page can depend on: the repository links (docs.site.case_links), threads and
# torch's or the harness's own switches.
ENV_PREFIXES = ("PITFALLS_", "TORCH_", "CUDA_", "OMP_", "MKL_")


def _hash_files(digest, folder: Path, paths) -> None:
    for path in sorted(paths):
        digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes() + b"\0")


def code_and_machine(
    code_folders: list[Path], records: Path, cases_dir: Path, case_paths: set[Path], corpus_facts: str
) -> str:
    """The part of every case's key that is not its own text: the code, the records, the corpus's
    other files and the facts a page reads from the whole corpus (``corpus_facts``), the
    interpreter, the installed packages, the devices and the environment."""
    from docs.site.stamp import Stamp

    digest = hashlib.sha256()
    for folder in code_folders:
        _hash_files(digest, folder, (p for p in folder.rglob("*.py") if "__pycache__" not in p.parts))
    if records.is_dir():
        _hash_files(digest, records, (p for p in records.rglob("*") if p.is_file()))
    others = (p for p in cases_dir.rglob("*") if p.is_file() and p.resolve() not in case_paths)
    _hash_files(digest, cases_dir, (p for p in others if "__pycache__" not in p.parts))
    packages = sorted(f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions())
    stamp = Stamp.here()
    settings = sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith(ENV_PREFIXES))
    for part in (
        corpus_facts,
        sys.version,
        platform.platform(),
        *packages,
        stamp.torch,
        *sorted(stamp.names.items()),
        *settings,
    ):
        digest.update(str(part).encode() + b"\0")
    return digest.hexdigest()


class PageCache:
    """``folder/<case id>/``: the key, the page notebook and the downloads of the build that made them."""

    def __init__(self, folder: Path, common: str, root: Path):
        self.folder, self.common, self.root = Path(folder), common, Path(root)

    def key(self, lc) -> str:
        where = str(lc.path.resolve().relative_to(self.root.resolve()))
        return hashlib.sha256(f"{self.common}\0{where}\0{lc.source_sha256}".encode()).hexdigest()

    def restore(self, lc, src: Path, extra: Path) -> bool:
        """The kept page and downloads of ``lc`` copied into the build, if its key still matches."""
        kept = self.folder / lc.id
        try:
            if (kept / KEY_FILE).read_text(encoding="utf-8") != self.key(lc):
                return False
            downloads = list((kept / DOWNLOADS).iterdir())
            shutil.copyfile(kept / PAGE, src / "cases" / f"{lc.id}.ipynb")
            (extra / DOWNLOADS).mkdir(parents=True, exist_ok=True)
            for path in downloads:
                shutil.copyfile(path, extra / DOWNLOADS / path.name)
        except OSError:  # gone meanwhile (another build replacing it): the case runs
            (src / "cases" / f"{lc.id}.ipynb").unlink(missing_ok=True)
            return False
        return True

    def store(self, lc, page: Path, downloads: list[Path]) -> None:
        """Keep what the build just wrote for ``lc``; the key is written last, so a copy cut short
        is never taken for a whole one."""
        self.folder.mkdir(parents=True, exist_ok=True)
        fresh = Path(tempfile.mkdtemp(prefix=f".{lc.id}-", dir=self.folder))
        (fresh / DOWNLOADS).mkdir()
        shutil.copyfile(page, fresh / PAGE)
        for path in downloads:
            shutil.copyfile(path, fresh / DOWNLOADS / path.name)
        (fresh / KEY_FILE).write_text(self.key(lc), encoding="utf-8")
        kept = self.folder / lc.id
        shutil.rmtree(kept, ignore_errors=True)
        fresh.rename(kept)
