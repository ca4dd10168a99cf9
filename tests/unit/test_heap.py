"""countersign.platform.heap: what a process built to start is frozen, after collecting its garbage or not."""

from __future__ import annotations

import gc
import weakref

import pytest

from countersign.platform import heap


class Node:
    def __init__(self):
        self.me = self  # a cycle: only the collector frees it


@pytest.fixture
def thawed():
    yield
    gc.unfreeze()


def test_settling_after_a_collection_frees_the_garbage_and_freezes_what_is_kept(thawed):
    kept, dropped = Node(), Node()
    gone = weakref.ref(dropped)
    del dropped
    heap.settle(collect=True)
    assert gone() is None
    assert not any(o is kept for o in gc.get_objects())  # frozen: no collection walks it
    assert gc.get_freeze_count() > 0


def test_settling_without_a_collection_keeps_the_garbage_of_start_up(thawed):
    dropped = Node()
    gone = weakref.ref(dropped)
    del dropped
    heap.settle(collect=False)
    gc.collect()
    assert gone() is not None  # the price of a cold start without a collection
    gc.unfreeze()
    gc.collect()
    assert gone() is None
