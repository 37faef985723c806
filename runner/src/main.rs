//! `dojo`: the simdojo command line.

fn main() {
    println!("dojo");
}
