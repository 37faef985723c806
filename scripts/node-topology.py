#!/usr/bin/env python3
"""Writes the multi-GPU node topologies (topologies/mi210x4.toml, mi300x-node.toml).

Topology files have no per-instance parameter substitution, and every component of a GPU
names its GPU (`gpu = "gpuN"`), so a node of N GPUs repeats each GPU's component blocks
N times. This script writes them from one description per part; edit it, not the
generated files, and run it from the repository root: python3 scripts/node-topology.py
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "topologies"

MI210_DEFAULTS = '''[defaults."amdgpu.cu"]
clock = "1700MHz"
lds_bytes = "64KiB"
line_bytes = 64
l1_size = "16KiB"

[defaults."amdgpu.l2"]
line_bytes = 128
size = "8MiB"
ways = 16
clock = "1700MHz"
hit_latency = 48
channels = 32
channel_bytes_per_clock = 128
mshrs = 4096
mshr_targets = 16
'''

MI300X_DEFAULTS = '''[defaults."amdgpu.cu"]
clock = "2100MHz"
lds_bytes = "64KiB"
line_bytes = 128

[defaults."amdgpu.l2"]
size = "4MiB"
ways = 16
clock = "2100MHz"
hit_latency = 48
channels = 16
channel_bytes_per_clock = 128
mshrs = 4096
mshr_targets = 16

[defaults."amdgpu.mall"]
# The L2s interleave 4 KiB granules over the 8 slices; each slice indexes the rest.
slices = 8
clock = "2100MHz"
hit_latency = 48
channels = 16
channel_bytes_per_clock = 64
mshrs = 1024
mshr_targets = 16
'''


# Memory-path link latencies: the stages of models/amdgpu/src/timing/latency.rs
# (`timing::latency::stages`, engine clocks), converted at the part's clock as the
# single-GPU topologies do (models/amdgpu/tests/link_latencies.rs checks both).
L2_CROSSBAR_ONE_WAY = 57
FABRIC_ONE_WAY = 100
IOD_LOCAL_ONE_WAY = 16


def cycles_ps(cycles, mhz):
    return f"{(cycles * 1_000_000 + mhz // 2) // mhz}ps"


def component(path, type_, params):
    inner = ", ".join(f"{k} = {v}" for k, v in params.items())
    return f'[[component]]\npath = "{path}"\ntype = "{type_}"\nparams = {{ {inner} }}\n'


def link(for_, from_, to, latency, comment=None):
    head = f"# {comment}\n" if comment else ""
    f = ", ".join(f'{k} = "{v}"' for k, v in for_.items())
    return f'{head}[[link]]\nfor = {{ {f} }}\nfrom = "{from_}"\nto = "{to}"\nlatency = "{latency}"\n'


def gpu_components(part, g):
    name = f'"gpu{g}"'
    p = f"gpu[{g}]"
    out = [component(p, "amdgpu.soc", {"name": name, **part["soc"]})]
    x, c = part["xcds"], part["cus"]
    out.append(component(f"{p}.xcd[0..{x}].cp", "amdgpu.cp", {"gpu": name}))
    out.append(component(f"{p}.xcd[0..{x}].l2", "amdgpu.l2", {"gpu": name}))
    out.append(component(f"{p}.xcd[0..{x}].cu[0..{c}]", "amdgpu.cu", {"gpu": name}))
    if part["mall"]:
        out.append(component(f"{p}.iod[0..4].mall[0..2]", "amdgpu.mall", {"size": '"32MiB"'}))
    out.append(component(f"{p}.hbm", "amdgpu.hbm", {"gpu": name, **part["hbm"]}))
    out.append(component(f"{p}.xgmi", "amdgpu.xgmi", {"gpu": name, **part["xgmi"]}))
    return out


def gpu_links(part, n):
    g = {"g": f"0..{n}"}
    x, c = part["xcds"], part["cus"]
    gx = {**g, "x": f"0..{x}"}
    gxc = {**gx, "c": f"0..{c}"}
    out = [
        link(gx, "gpu[$g].xcd[$x]", "gpu[$g].xcd[$x].cp.soc", "100ns", "Each GPU as its single-GPU topology: SoC <-> command processors."),
        link(gxc, "gpu[$g].xcd[$x].cp.cu[$c]", "gpu[$g].xcd[$x].cu[$c].cp", "10ns", "Command processor <-> compute units."),
        link(gxc, "gpu[$g].xcd[$x].cu[$c].l2", "gpu[$g].xcd[$x].l2.cu[$c]", cycles_ps(L2_CROSSBAR_ONE_WAY, part["mhz"]), "Compute units <-> L2 (stages::L2_CROSSBAR_ONE_WAY)."),
        link(gx, "gpu[$g].xcd[$x].l2.home", "gpu[$g].l2[$x]", "200ns", "L2 <-> the SoC's coherent home."),
        link(gx, "gpu[$g].xcd[$x].l2.xgmi", "gpu[$g].xgmi.l2[$x]", part["l2_xgmi"], "L2 <-> the GPU's XGMI block (peer-memory lines)."),
    ]
    if part["mall"]:
        out += [
            link({**gx, "s": "0..8"}, "gpu[$g].xcd[$x].l2.down[$s]", "gpu[$g].iod[$s/2].mall[$s%2].up[$x]", cycles_ps(FABRIC_ONE_WAY, part["mhz"]), "L2s -> memory-side cache slices (stages::FABRIC_ONE_WAY)."),
            link({**g, "s": "0..8"}, "gpu[$g].iod[$s/2].mall[$s%2].down", "gpu[$g].hbm.up[$s]", cycles_ps(IOD_LOCAL_ONE_WAY, part["mhz"]), "Slices -> HBM (stages::IOD_LOCAL_ONE_WAY)."),
            link({**g, "s": "0..8"}, "gpu[$g].mall[$s]", "gpu[$g].iod[$s/2].mall[$s%2].soc", "200ns", "SoC -> slices (statistics)."),
        ]
    else:
        out.append(link(gx, "gpu[$g].xcd[$x].l2.down[0]", "gpu[$g].hbm.up[$x]", cycles_ps(FABRIC_ONE_WAY, part["mhz"]), "L2s -> HBM (stages::FABRIC_ONE_WAY)."))
    out.append(link(g, "gpu[$g].hbm[0]", "gpu[$g].hbm.soc", "200ns", "SoC -> HBM (statistics)."))
    return out


def xgmi_links(n, latency):
    """Every pair of GPUs directly linked: GPU i's link port k leads to the k-th other GPU."""
    out = []
    for i in range(n):
        for j in range(i + 1, n):
            out.append(f'[[link]]\nfrom = "gpu[{i}].xgmi.link[{j - 1}]"\nto = "gpu[{j}].xgmi.link[{i}]"\nlatency = "{latency}"\n')
    return out


def write(file, header, part, n):
    blocks = [header, '[engine]\n# One partition per GPU: the cut is at the XGMI links between GPUs, whose latency\n# is the lookahead between partitions.\npartitioner = "subtree"\n', part["defaults"]]
    for g in range(n):
        blocks += gpu_components(part, g)
    blocks += gpu_links(part, n)
    blocks.append(f"# XGMI links, fully connected ({n * (n - 1) // 2} links).\n")
    blocks += xgmi_links(n, part["xgmi_latency"])
    text = "\n".join(blocks)
    (ROOT / file).write_text(text)


MI210_HEADER = '''# Generated by scripts/node-topology.py: edit that, not this file.
#
# Four AMD Instinct MI210 (gfx90a) joined by an Infinity Fabric Link bridge (the 4-way
# bridge connects every pair of cards: each MI210 has 3 Infinity Fabric links). Each GPU
# is topologies/mi210.toml with its components named gpu0..gpu3.
#
# XGMI links (amdgpu.xgmi):
# - Bandwidth: 50 GB/s each direction per link (bytes_per_clock = 50 at 1 GHz). AMD's
#   MI210 specifications give a peak Infinity Fabric link bandwidth of 100 GB/s per link
#   (3 links, 300 GB/s aggregate); a CDNA2 xGMI link is 16 lanes at 25 GT/s = 50 GB/s
#   per direction (as measured studies of MI250X nodes, e.g. Schieffer et al. 2024,
#   state for their single inter-GPU links).
# - Latency: no public per-link latency figure was found. 400 ns one way is an
#   estimate (SerDes, the bridge and the peer's data fabric), chosen so a peer load's
#   round trip (about 1.1 us with the home's 300 ns memory_latency) sits above a local
#   HBM miss; it also is the lookahead between the GPUs' partitions.
#
# Run a HIP program on the node: dojo run --topology topologies/mi210x4.toml PROGRAM
# Run a code object on GPU 2: dojo exec --gpu 2 --topology topologies/mi210x4.toml IMAGE
'''

MI300X_HEADER = '''# Generated by scripts/node-topology.py: edit that, not this file.
#
# Eight AMD Instinct MI300X (gfx942) on one OAM platform, every pair joined by an
# Infinity Fabric (xGMI) link. Each GPU is topologies/mi300x.toml with its components
# named gpu0..gpu7.
#
# XGMI links (amdgpu.xgmi):
# - Bandwidth: 64 GB/s each direction per link (bytes_per_clock = 64 at 1 GHz). AMD's
#   MI300X data sheet gives 7 Infinity Fabric links of 128 GB/s peak (896 GB/s
#   aggregate); an xGMI-3 link is 16 lanes at 32 GT/s = 64 GB/s per direction.
# - Latency: no public per-link latency figure was found. 500 ns one way is an
#   estimate (SerDes, the platform's traces and the peer's IOD fabric, longer than the
#   MI210 bridge's 400 ns because a request crosses the larger IODs), chosen so a peer
#   load's round trip (about 1.3 us with the home's 300 ns memory_latency) sits above a
#   local HBM miss; it also is the lookahead between the GPUs' partitions.
#
# Run a code object on GPU 5: dojo exec --gpu 5 --topology topologies/mi300x-node.toml IMAGE
'''

MI210 = {
    "soc": {"target": '"gfx90a"', "memory": '"64GiB"', "clock": '"1700MHz"'},
    "xcds": 1,
    "cus": 104,
    "mall": False,
    "hbm": {"part": '"mi210"', "clock": '"1700MHz"', "line_bytes": 128},
    "xgmi": {"line_bytes": 128, "bytes_per_clock": 50},
    "mhz": 1700,
    "l2_xgmi": "100ns",
    "xgmi_latency": "400ns",
    "defaults": MI210_DEFAULTS,
}

MI300X = {
    "soc": {"target": '"gfx942"', "memory": '"192GiB"', "clock": '"2100MHz"'},
    "xcds": 8,
    "cus": 38,
    "mall": True,
    "hbm": {"part": '"mi300x"', "clock": '"2100MHz"', "line_bytes": 128},
    "xgmi": {"line_bytes": 128, "bytes_per_clock": 64},
    "mhz": 2100,
    "l2_xgmi": "200ns",
    "xgmi_latency": "500ns",
    "defaults": MI300X_DEFAULTS,
}

if __name__ == "__main__":
    write("mi210x4.toml", MI210_HEADER, MI210, 4)
    write("mi300x-node.toml", MI300X_HEADER, MI300X, 8)
