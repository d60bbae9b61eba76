"""Run a derivation script's ``test_*`` functions without pytest: ``python derivations/derive_<x>.py``."""
import time


def run_tests(namespace: dict) -> None:
    """Call every ``test_*`` function of ``namespace`` (a module's ``globals()``) and report each."""
    for name, fn in list(namespace.items()):
        if not (name.startswith("test_") and callable(fn)):
            continue
        t0 = time.time()
        try:
            fn()
        except BaseException as exc:  # pytest.skip raises a BaseException subclass
            if type(exc).__name__ != "Skipped":
                raise
            print(f"skip  {name}: {exc}")
            continue
        print(f"ok    {name}  ({time.time() - t0:.2f}s)")
