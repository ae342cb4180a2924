use battlelab_core::engine::System;
use battlelab_core::systems::field::battle::{FieldCombat, FieldRules};
use std::time::Instant;
fn main() {
    for _ in 0..5 {
        let t = Instant::now();
        let field = FieldCombat::new(FieldRules::printed()).expect("the printed rules");
        let t1 = t.elapsed();
        let prepared = battlelab_core::scenarios::field_battle().prepare().unwrap();
        let t2 = t.elapsed();
        let d = field.battle_distribution(&prepared, 1_000_000);
        let t3 = t.elapsed();
        std::hint::black_box(d);
        let text = std::fs::read_to_string("analyses/field_combat.toml").unwrap();
        let t = Instant::now();
        let s = battlelab_core::systems::field::FieldStudy::parse(
            std::path::Path::new("analyses/field_combat.toml"),
            &text,
        );
        let tp = t.elapsed();
        let t = Instant::now();
        let e = s.as_ref().ok().map(|s| s.exact(0));
        let te = t.elapsed();
        println!(
            "new {t1:?} prepare {:?} dist {:?} ; analysis parse {tp:?} exact(0) {te:?} {}",
            t2 - t1,
            t3 - t2,
            e.is_some()
        );
    }
}
