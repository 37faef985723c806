#!/usr/bin/env python3
"""Reads the log of a test run (cargo test --no-fail-fast and pytest, as scripts/test
writes it) and prints one line over every test binary, the C tests (which run inside
the C API's cargo test binaries) and pytest:

    N passed, N failed (B test binaries; X crashed or did not build)

A test binary that failed without a result line (a crash, a build error, a time-out
of the whole binary) counts as one failure, so the line never reads "0 failed" for a
run that did not finish. Exit status: 0 when nothing failed, 1 otherwise."""
import re
import sys


def summarize(text):
    passed = failed = binaries = 0
    for m in re.finditer(r"^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed", text, re.M):
        passed += int(m.group(1))
        failed += int(m.group(2))
        binaries += 1
    failed_results = len(re.findall(r"^test result: FAILED\.", text, re.M))
    # cargo --no-fail-fast ends with "error: N targets failed:"; one target alone is
    # reported as "error: test failed, to rerun pass ...".
    m = re.search(r"^error: (\d+) targets? failed:", text, re.M)
    failed_targets = int(m.group(1)) if m else len(re.findall(r"^error: test failed, to rerun pass", text, re.M))
    no_result = max(0, failed_targets - failed_results)
    if re.search(r"^error(\[E\d+\])?: could not compile", text, re.M):
        no_result = max(no_result, 1)
    # pytest -q: "7 passed in 1.23s", "1 failed, 6 passed in ...", "2 errors".
    for line in re.findall(r"^=*\s*((?:\d+ (?:passed|failed|errors?|skipped)[, ]*)+) in [\d.]+s", text, re.M):
        for n, what in re.findall(r"(\d+) (passed|failed|errors?)", line):
            if what == "passed":
                passed += int(n)
            else:
                failed += int(n)
        binaries += 1
    if "PYTEST_DID_NOT_FINISH" in text:
        no_result += 1
    failed += no_result
    return passed, failed, binaries, no_result


def main():
    text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
    passed, failed, binaries, no_result = summarize(text)
    extra = f"; {no_result} crashed or did not build" if no_result else ""
    print(f"{passed} passed, {failed} failed ({binaries} test binaries and suites{extra})")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
