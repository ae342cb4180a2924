//! Where the time of a rules file's exact results goes, for the battles the benches time:
//! reading the analysis (which builds the chain and the walk), building the chain alone,
//! solving it in floating point and in fractions, and building the walk's tables — the
//! best of five runs each, in milliseconds.
//!
//! `cargo run --release -p battlelab-core --example rules_exact_cost`

use battlelab_core::systems::rules_file::{
    chain::{Chain, Prepared},
    kernel::Walk,
    scenarios, RulesStudy,
};
use std::time::Instant;
fn main() {
    type Make = fn() -> RulesStudy;
    let which: Vec<(&str, Make)> = vec![
        ("field", scenarios::field_12_v_8),
        ("naval", scenarios::naval_engagement_6_v_4),
        ("risk", scenarios::risk_30_v_30),
        ("pool", scenarios::dice_pool_10_v_10),
        ("crt", scenarios::classic_crt),
    ];
    for (name, make) in which {
        let s = make();
        let g = s.game(0);
        let base = s.runs[0].base.clone();
        let cc = Prepared::of(g);
        let mut best = [f64::MAX; 5];
        let mut info = String::new();
        for _ in 0..5 {
            let t = Instant::now();
            let _ = make();
            let tp = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let c = Chain::build(g, &cc, &base).unwrap();
            let tc = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let o = c.order().unwrap();
            let _m = c.absorption_f64(&o);
            let tf = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let _m2 = c.absorption(&o);
            let tq = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let _w = Walk::new(g, &base, &c);
            let tw = t.elapsed().as_secs_f64();
            for (b, x) in best.iter_mut().zip([tp, tc, tf, tq, tw]) {
                *b = b.min(x);
            }
            info = format!("states {} edges {}", c.states.len(), c.edges.len());
        }
        println!("{name:6} all {:8.3} ms | chain {:8.3} | f64 {:7.3} | frac {:8.3} | walk {:7.3} | {info}", best[0]*1e3, best[1]*1e3, best[2]*1e3, best[3]*1e3, best[4]*1e3);
    }
}
