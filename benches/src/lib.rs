//! Benchmarks of simdojo and its peers.
