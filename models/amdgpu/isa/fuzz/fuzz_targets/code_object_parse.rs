//! Fuzz target: `CodeObject::parse` returns Ok or Err for any bytes, never panics, and
//! whatever it accepts can be laid out as a flat image and have its SGPR layout computed.
//!
//! Seed it with real code objects: `sh seed.sh` copies the corpus builds that
//! `cargo test -p amdgpu-isa` left in `target/tmp/amdgpu-corpus/`.
#![no_main]

use amdgpu_isa::code_object::CodeObject;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(code_object) = CodeObject::parse(data) {
        let _ = code_object.flat_image();
        let _ = code_object.load_image(0x7f00_0000_0000);
        for kernel in code_object.kernels() {
            let _ = kernel.descriptor.user_sgprs();
            let _ = kernel.descriptor.system_sgprs();
        }
    }
});
