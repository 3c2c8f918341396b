"""Thread-safe cache of network evaluations, keyed by a position hash.

Like KataGo's NNCacheTable it is a direct-mapped table of ``2**size_power_of_two`` slots:
a key's slot is its low bits, a new entry replaces whatever held the slot, and a lookup
only hits when the stored full key is equal. Slots are created on first use, so memory
grows with the number of distinct positions stored, not with the capacity.
"""

from __future__ import annotations

import threading
from typing import Generic, Hashable, Optional, TypeVar

V = TypeVar("V")

# KataGo's default nnCacheSizePowerOfTwo.
DEFAULT_CACHE_SIZE_POWER_OF_TWO = 20
MAX_CACHE_SIZE_POWER_OF_TWO = 48


class NNCache(Generic[V]):
    def __init__(self, size_power_of_two: int = DEFAULT_CACHE_SIZE_POWER_OF_TWO):
        if not 0 <= size_power_of_two <= MAX_CACHE_SIZE_POWER_OF_TWO:
            raise ValueError(f"cache size power of two must be in 0..{MAX_CACHE_SIZE_POWER_OF_TWO}, got {size_power_of_two}")
        self.capacity = 1 << size_power_of_two
        self._mask = self.capacity - 1
        # slot -> (position hash, extra key, value): one flat tuple per entry (a million of them at most)
        self._slots: dict[int, tuple[int, Hashable, V]] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def _slot(self, position_hash: int) -> int:
        return position_hash & self._mask

    def get(self, position_hash: int, extra_key: Hashable = None) -> Optional[V]:
        """The cached value for the position, or None.

        ``extra_key`` distinguishes evaluations of one position under different settings
        (e.g. policy optimism); it must be equal for a hit.
        """
        with self._lock:
            entry = self._slots.get(self._slot(position_hash))
            if entry is not None and entry[0] == position_hash and entry[1] == extra_key:
                self.hits += 1
                return entry[2]
            self.misses += 1
            return None

    def get_many(self, position_hashes: list[int], extra_keys: list[Hashable]) -> list[Optional[V]]:
        """get() for many positions under one lock (a search's batch)."""
        mask, slots, found = self._mask, self._slots, []
        with self._lock:
            for position_hash, extra_key in zip(position_hashes, extra_keys):
                entry = slots.get(position_hash & mask)
                if entry is not None and entry[0] == position_hash and entry[1] == extra_key:
                    found.append(entry[2])
                else:
                    found.append(None)
            hit_count = len(found) - found.count(None)
            self.hits += hit_count
            self.misses += len(found) - hit_count
        return found

    def put(self, position_hash: int, value: V, extra_key: Hashable = None) -> None:
        with self._lock:
            self._slots[self._slot(position_hash)] = (position_hash, extra_key, value)

    def put_many(self, position_hashes: list[int], values: list[V], extra_keys: list[Hashable]) -> None:
        """put() for many positions under one lock."""
        mask, slots = self._mask, self._slots
        with self._lock:
            for position_hash, value, extra_key in zip(position_hashes, values, extra_keys):
                slots[position_hash & mask] = (position_hash, extra_key, value)

    def clear(self) -> None:
        with self._lock:
            self._slots.clear()
            self.hits = 0
            self.misses = 0

    def __len__(self) -> int:
        return len(self._slots)
