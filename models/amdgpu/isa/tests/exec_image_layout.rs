//! Image layouts against ROCr's own layout code: `tests/data/image_layout.txt` holds
//! texel addresses that AMD's addrlib (the copy in ROCR-Runtime's image code, set up as
//! ROCr sets it up for a gfx9 agent, with the simulated GPU's GB_ADDR_CONFIG)
//! computes for linear and every fixed-block gfx9 swizzle mode, 1D, 2D, 2D-array and 3D
//! images of 1- to 16-byte texels, with and without mip chains
//! (`data/sweep/layout_oracle.sh` regenerates it). The executor's
//! [`texel_address`] must agree on every one.

use amdgpu_isa::exec::image::texel_address;

/// The T# of a surface line `[type, bpp, mode, width, height, slices, levels, pitch]`:
/// base 0, a UINT format of the element size, the sizes, the swizzle mode, and the
/// resource type (1D, 2D or 2D array, 3D).
fn t_sharp(line: &[u32]) -> [u32; 8] {
    let [ty, bpp, mode, w, h, slices, levels, pitch] = [line[0], line[1], line[2], line[3], line[4], line[5], line[6], line[7]];
    let data_format = match bpp {
        8 => 1,   // 8
        16 => 2,  // 16
        32 => 4,  // 32
        64 => 11, // 32_32
        _ => 14,  // 32_32_32_32
    };
    let uint = 4;
    let kind = match (ty, slices) {
        (1, 1) => 8,
        (1, _) => 12,
        (2, 1) => 9,
        (2, _) => 13,
        _ => 10,
    };
    let depth = slices - 1;
    [
        0,
        data_format << 20 | uint << 26,
        (w - 1) | (h - 1) << 14,
        0b111_110_101_100 | (levels - 1) << 16 | mode << 20 | kind << 28,
        depth | (pitch - 1) << 13,
        (levels - 1) << 28,
        0,
        0,
    ]
}

#[test]
fn texel_addresses_agree_with_rocr_addrlib() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/image_layout.txt");
    let data = std::fs::read_to_string(&path).expect("tests/data/image_layout.txt is part of the crate");
    let mut t = None;
    let mut surface = String::new();
    let (mut points, mut surfaces) = (0usize, 0usize);
    let mut failures = Vec::new();
    for line in data.lines() {
        let f: Vec<u32> = line.split_whitespace().skip(1).map(|v| v.parse().expect("a number")).collect();
        if line.starts_with('S') {
            t = Some(t_sharp(&f));
            surface = line.to_string();
            surfaces += 1;
            continue;
        }
        let t = t.expect("a surface line comes first");
        let [level, x, y, z] = [f[0], f[1], f[2], f[3]];
        let want = line.split_whitespace().nth(5).and_then(|v| v.parse::<u64>().ok()).expect("an address");
        let got = texel_address(t, level, x, y, z);
        points += 1;
        if got != Some(want) && failures.len() < 20 {
            failures.push(format!("{surface}: level {level} ({x}, {y}, {z}): addrlib {want:#x}, ours {got:x?}"));
        }
    }
    println!("{surfaces} surfaces, {points} texel addresses");
    assert!(surfaces > 1000 && failures.is_empty(), "{} disagreements, first:\n{}", failures.len(), failures.join("\n"));
}
