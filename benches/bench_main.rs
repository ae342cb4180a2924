//! Criterion benches for every kernel. Each group reports battles (or resolutions) per
//! second with `Throughput::Elements`, beside a bare xoshiro256++ `next_u64` loop in the
//! same group, so figures can be read as ratios on a shared, noisy machine.

use criterion::criterion_main;

mod benchmarks;

criterion_main!(
    benchmarks::crt::benches,
    benchmarks::field::benches,
    benchmarks::strategic::benches,
    benchmarks::ratio::benches,
    benchmarks::melee::benches,
    benchmarks::frontier::benches,
    benchmarks::driver::benches,
    benchmarks::rules_file::benches,
);
