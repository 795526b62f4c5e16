"""The collector runs between files, not during them (harness/lint/memory.py): a file's cycles are freed after
the files of one collection, automatic collection is off inside the run and restored after it."""

from __future__ import annotations

import gc
import weakref

from torch_pitfalls.lint.memory import FILES_PER_COLLECTION, collected_between_files


class _Node:
    pass


def _cycle():
    """An object that only the cyclic collector frees (it refers to itself), and a weak reference to it."""
    node = _Node()
    node.me = node
    return weakref.ref(node)


def test_cycles_freed_after_a_collections_files_and_collection_restored():
    was = gc.isenabled()
    with collected_between_files() as file_done:
        assert not gc.isenabled()
        alive = _cycle()
        for _ in range(FILES_PER_COLLECTION - 1):
            file_done()
        assert alive() is not None  # no collection inside a batch of files
        file_done()
        assert alive() is None  # freed by the collection after the batch
        left = _cycle()
    assert left() is None  # and by the last one on the way out
    assert gc.isenabled() == was
