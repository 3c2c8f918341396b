"""freeze_startup_objects: what start-up made is collected once, then left out of later collections."""
import gc
import weakref

from katacli.startup_objects import freeze_startup_objects


class _Cycle:
    def __init__(self):
        self.me = self


def test_garbage_is_collected_then_the_living_objects_leave_later_collections():
    gc.unfreeze()
    try:
        garbage = _Cycle()
        garbage_ref = weakref.ref(garbage)
        del garbage   # a cycle: only a collection frees it
        kept = _Cycle()
        before = gc.get_freeze_count()
        assert freeze_startup_objects() > before
        assert garbage_ref() is None
        # The frozen objects are in no generation a collection walks; objects made later still are.
        assert not any(obj is kept for obj in gc.get_objects())
        fresh = _Cycle()
        assert any(obj is fresh for obj in gc.get_objects())
    finally:
        gc.unfreeze()
