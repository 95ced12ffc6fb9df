"""Batch calls release the GIL while they compute: another Python thread runs meanwhile."""

import threading
import time

import seaccess
from conftest import debian_policy


def test_check_many_lets_other_threads_run(oracle):
    path = debian_policy("default")
    p = seaccess.Policy.load(path)
    perms = {c: ps[0][1] for c, ps in oracle.perms(path).items()}
    queries = [(s, t, c, perms[c]) for s, t, c in oracle.gen(path, 7, 2000)] * 200
    p.check_many(queries[:1000])  # contexts parsed once, outside the timing
    stamps = {}

    def batch():
        stamps["start"] = time.perf_counter()
        p.check_many(queries)
        stamps["end"] = time.perf_counter()

    w = threading.Thread(target=batch)
    w.start()
    time.sleep(0.05)
    # Holding the GIL through the call, the batch would keep this thread asleep until it
    # returned; released, this thread wakes while the batch still computes.
    woke = time.perf_counter()
    w.join()
    assert stamps["end"] - stamps["start"] > 0.1, "the batch is too short to tell"
    assert woke < stamps["end"] - 0.02, (woke - stamps["start"], stamps["end"] - stamps["start"])
