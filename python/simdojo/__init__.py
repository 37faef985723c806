"""simdojo from Python: simulated AMD Instinct GPUs on a deterministic parallel
discrete-event engine.

    import simdojo
    vm = simdojo.Vm("topologies/mi300x.toml", set={"l2.size": "8MiB"}, workers=1)
    vm.load_program("prog.co", args=["42"])   # built by `dojo cc`
    ticks = vm.run()                          # simulated picoseconds
    print(vm.exit_code, vm.stats()["kernels"])

`sweep(topology, program, grid)` runs a parameter study in this process and returns one
dict per point (ready for pandas); `bench_phold(**params)` runs the PHOLD benchmark.
Simulations run with the GIL released. Errors are `simdojo.Error` subclasses.
"""

from ._simdojo import (
    ArgumentError,
    CheckpointError,
    Error,
    IoError,
    ProgramError,
    SimulationError,
    StateError,
    TopologyError,
    Vm,
    bench_phold,
    sweep,
)

__all__ = [
    "ArgumentError",
    "CheckpointError",
    "Error",
    "IoError",
    "ProgramError",
    "SimulationError",
    "StateError",
    "TopologyError",
    "Vm",
    "bench_phold",
    "sweep",
]
