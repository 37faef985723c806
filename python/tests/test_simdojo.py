"""The Python module against real programs: a `dojo cc`-built GPU program (compiled by
the test with the real clang through `dojo cc`), checkpoints, sweeps, PHOLD, misuse.

Environment: DOJO (the `dojo` binary, default target/release/dojo or target/debug/dojo).
"""

import os
import pathlib
import shutil
import subprocess
import threading

import pytest

import simdojo

REPO = pathlib.Path(__file__).resolve().parents[2]
MI300X = REPO / "topologies" / "mi300x.toml"
SMALL = REPO / "topologies" / "test-gfx942.toml"

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  unsigned n = 8192;
  unsigned *a = malloc(n * sizeof *a);
  unsigned sum = 0;
  for (int round = 0; round < 3; round++) {
    for (unsigned i = 0; i < n; i++) a[i] = i + round;
    for (unsigned i = 0; i < n; i++) sum += a[i];
    printf("py round %d: %u\n", round, sum);
  }
  free(a);
  return argc > 1 ? atoi(argv[1]) : 0;
}
"""


def dojo():
    if "DOJO" in os.environ:
        return os.environ["DOJO"]
    for profile in ("release", "debug"):
        p = REPO / "target" / profile / "dojo"
        if p.exists():
            return str(p)
    found = shutil.which("dojo")
    if found:
        return found
    pytest.fail("no dojo binary: build it with cargo build -p runner, or set DOJO")


@pytest.fixture(scope="session")
def program(tmp_path_factory):
    d = tmp_path_factory.mktemp("prog")
    src = d / "prog.c"
    src.write_text(PROGRAM)
    out = d / "prog.co"
    subprocess.run([dojo(), "cc", "--mcpu", "gfx942", "-o", str(out), str(src)], check=True)
    return out


def test_run_gives_ticks_exit_code_and_statistics(program, capfd):
    vm = simdojo.Vm(str(SMALL), workers=1)
    assert vm.exit_code is None
    vm.load_program(str(program), args=["5"])
    ticks = vm.run()
    assert ticks > 0 and ticks == vm.now
    assert vm.finished and vm.exit_code == 5
    stats = vm.stats()
    assert stats["exit_code"] == 5 and stats["ticks"] == ticks
    # `_end` calls exit(), which ends the simulation: its own statistics never complete.
    assert [k["kernel"] for k in stats["kernels"]][:2] == ["_begin", "_start"]
    assert sum(k["l2"]["hits"] + k["l2"]["misses"] for k in stats["kernels"]) > 0
    assert "py round 2:" in capfd.readouterr().out
    assert vm.step() is False  # an ended VM stays ended


def test_step_checkpoint_and_restore_match_the_straight_run(program, tmp_path):
    reference = simdojo.Vm(str(MI300X))
    reference.load_program(str(program))
    end = reference.run()
    first = simdojo.Vm(str(MI300X), workers=2)
    first.load_program(str(program))
    while first.now < end // 2:
        assert first.step()
    ckpt = tmp_path / "half.ckpt"
    first.save_checkpoint(str(ckpt))
    second = simdojo.Vm.restore(str(ckpt), workers=1)
    assert second.now == first.now
    assert first.run() == end and second.run() == end
    assert first.exit_code == second.exit_code == reference.exit_code == 0
    assert first.stats() == second.stats() == reference.stats()


def test_overrides_change_the_machine(program):
    rows = simdojo.sweep(str(SMALL), str(program), {"l2.size": ["64KiB", "4MiB"]}, args=["0"])
    assert [r["l2.size"] for r in rows] == ["64KiB", "4MiB"]
    assert all(r["status"] == 0 and r["error"] is None for r in rows), rows
    small, large = rows
    assert small["kernels"] >= 2 and small["l2.misses"] >= large["l2.misses"]
    assert small["l2.hits"] + small["l2.misses"] == large["l2.hits"] + large["l2.misses"]


def test_mode_is_the_compute_units_mode_and_overrides_win(program):
    def cycles(vm):
        vm.load_program(str(program), args=["0"])
        vm.run()
        return sum(k["cycles"] for k in vm.stats()["kernels"])

    functional = cycles(simdojo.Vm(str(SMALL)))
    timing = cycles(simdojo.Vm(str(SMALL), mode="timing"))
    assert timing != functional
    # An override names a unit more specifically than the mode: it wins.
    assert cycles(simdojo.Vm(str(SMALL), mode="timing", set={"cu.mode": "functional"})) == functional
    rows = simdojo.sweep(str(SMALL), str(program), {"l2.size": ["1MiB"]}, args=["0"], mode="timing")
    assert rows[0]["status"] == 0 and rows[0]["cycles"] == timing, rows
    with pytest.raises(simdojo.ArgumentError, match="functional, timing"):
        simdojo.Vm(str(SMALL), mode="fast")


def test_sweep_is_a_grid_and_keeps_failed_points(program):
    grid = {"l2.size": ["1MiB", "2MiB"], "l2.policy": ["lru", "bogus"]}
    rows = simdojo.sweep(str(SMALL), str(program), grid, jobs=2)
    assert [(r["l2.size"], r["l2.policy"]) for r in rows] == [("1MiB", "lru"), ("1MiB", "bogus"), ("2MiB", "lru"), ("2MiB", "bogus")]
    assert [r["status"] for r in rows] == [0, None, 0, None]
    assert "bogus" in rows[1]["error"]
    assert rows[0]["ticks"] > 0


def test_bench_phold_digest_does_not_depend_on_workers():
    one = simdojo.bench_phold(lps=64, end_time=200, workers=1)
    two = simdojo.bench_phold(lps=64, end_time=200, workers=2)
    assert one["events"] > 0 and one["events"] == two["events"]
    assert one["digest"] == two["digest"] and two["workers"] >= 1
    with pytest.raises(simdojo.ArgumentError, match="lookahead"):
        simdojo.bench_phold(lookahead=0)
    with pytest.raises(TypeError):
        simdojo.bench_phold(no_such_parameter=1)


PRINTER = r"""
#include <stdio.h>
int main(void) {
  char line[480];
  for (int i = 0; i < 479; i++) line[i] = 'a' + i % 26;
  line[479] = 0;
  for (int i = 0; i < 256; i++) printf("%04d %s\n", i, line);
  return 0;
}
"""


def test_the_gil_is_released_while_simulating(tmp_path):
    # The program prints 120 KiB into a pipe of 4 KiB that only another Python thread
    # drains: the run can finish only if that thread runs while it simulates. Nothing
    # here depends on time; if the GIL were held, the run would block for good, and
    # faulthandler ends the process after ten minutes instead of hanging the suite.
    src, image = tmp_path / "printer.c", tmp_path / "printer.co"
    src.write_text(PRINTER)
    subprocess.run([dojo(), "cc", "--mcpu", "gfx942", "-o", str(image), str(src)], check=True)
    vm = simdojo.Vm(str(SMALL))
    vm.load_program(str(image))
    import fcntl
    import faulthandler
    import sys

    read_fd, write_fd = os.pipe()
    fcntl.fcntl(write_fd, 1031, 4096)  # F_SETPIPE_SZ
    received = bytearray()

    def drain():
        while chunk := os.read(read_fd, 4096):
            received.extend(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(write_fd, 1)
    faulthandler.dump_traceback_later(600, exit=True)
    try:
        vm.run()
    finally:
        faulthandler.cancel_dump_traceback_later()
        os.dup2(saved, 1)
        os.close(saved)
        os.close(write_fd)
    reader.join()
    os.close(read_fd)
    assert vm.exit_code == 0
    lines = received.decode().splitlines()
    assert len(lines) == 256 and lines[-1].startswith("0255 abc"), (len(lines), lines[-1:])


def test_misuse_raises_with_the_cli_messages(program, tmp_path):
    with pytest.raises(simdojo.TopologyError, match="nonexistent"):
        simdojo.Vm("/nonexistent/topology.toml")
    with pytest.raises(simdojo.TopologyError, match="<string>"):
        simdojo.Vm.from_string("[[component]\npath = ")
    with pytest.raises(simdojo.TopologyError, match="--set"):
        simdojo.Vm(str(SMALL), set={"l2.no_such_parameter": 1})
    with pytest.raises(simdojo.ArgumentError, match="workers"):
        simdojo.Vm(str(SMALL), workers=0)
    vm = simdojo.Vm(str(SMALL))
    with pytest.raises(simdojo.IoError, match="reading /nonexistent/prog.co"):
        vm.load_program("/nonexistent/prog.co")
    with pytest.raises(simdojo.ProgramError, match="not an AMDGPU code object"):
        vm.load_program(str(SMALL))
    with pytest.raises(simdojo.ArgumentError, match="limit is 1024"):
        vm.load_program(str(program), threads=2048)
    with pytest.raises(simdojo.ArgumentError, match="4294967295"):
        vm.load_program(str(program), threads=1024, blocks=1 << 23)
    vm.load_program(str(program))
    with pytest.raises(simdojo.StateError):
        vm.load_program(str(program))
    ckpt = tmp_path / "x.ckpt"
    vm.save_checkpoint(str(ckpt))
    data = bytearray(ckpt.read_bytes())
    data[len(data) // 2] ^= 0x01
    ckpt.write_bytes(bytes(data))
    with pytest.raises(simdojo.CheckpointError, match="corrupted"):
        simdojo.Vm.restore(str(ckpt))
    with pytest.raises(simdojo.IoError, match="missing.ckpt"):
        simdojo.Vm.restore(str(tmp_path / "missing.ckpt"))
    with pytest.raises(simdojo.CheckpointError, match="not a simdojo VM checkpoint"):
        simdojo.Vm.restore(str(SMALL))
    assert issubclass(simdojo.CheckpointError, simdojo.Error)
