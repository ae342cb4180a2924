use battlelab_core::systems::rules_file::{
    chain::{Chain, CompareCache},
    scenarios,
};
use std::time::Instant;
fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map(|x| x.parse().unwrap())
        .unwrap_or(3);
    let s = scenarios::field_12_v_8();
    let g = s.game(0);
    let base = s.runs[0].base.clone();
    let cc = CompareCache::of(g);
    let t = Instant::now();
    for _ in 0..n {
        let c = Chain::build(g, &cc, &base).unwrap();
        std::hint::black_box(c);
    }
    println!("chain {:?}", t.elapsed() / n as u32);
}
