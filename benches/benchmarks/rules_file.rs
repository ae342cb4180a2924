//! Rules files: battles walked through their compiled chains, beside the bare
//! xoshiro256++ loop and, for the naval engagement and the field battle 12 v 8, the
//! built-in kernel of the same battle (the bound: a rules-file battle costs at
//! most 1.5× the built-in's);
//! and the exact enumerations (Risk 30 v 30, the dice pool 10 v 10, the classic CRT), each
//! from its file, and the field battle's and naval engagement's enumeration alone beside
//! the built-in's exact distribution (the bound: within 2×).

use std::hint::black_box;

use criterion::{criterion_group, Criterion, Throughput};

use battlelab::dice::DiceStream;
use battlelab_core::engine::System;
use battlelab_core::systems::field::battle::{FieldCombat, FieldRules, PreparedBattle};
use battlelab_core::systems::naval_engagement::engagement::EngagementHistogram;
use battlelab_core::systems::rules_file::chain::{Chain, Prepared};
use battlelab_core::systems::rules_file::scenarios;

use super::{bare_xoshiro, BATCH};

/// The built-in field battle 12 v 8 (`field::scenarios::field_battle`) by the printed
/// rules: what the rules file `field` is timed beside.
fn built_in_field_12_v_8() -> (FieldCombat, PreparedBattle) {
    let field = FieldCombat::new(FieldRules::printed()).expect("the printed rules");
    let prepared = battlelab_core::scenarios::field_battle()
        .prepare()
        .expect("a valid battle");
    (field, prepared)
}

fn rules_file(c: &mut Criterion) {
    let mut group = c.benchmark_group("rules files");
    group.throughput(Throughput::Elements(BATCH));
    let mut dice = DiceStream::for_block(1, 0);
    group.bench_function("bare xoshiro256++ next_u64", |b| {
        b.iter(|| black_box(bare_xoshiro(&mut dice, BATCH)))
    });
    let (naval, engagement) = battlelab_core::scenarios::naval();
    let kernel = naval.kernel(&engagement);
    let mut dice = DiceStream::for_block(1, 0);
    let mut h = EngagementHistogram::new(&engagement);
    group.bench_function("built-in naval engagement 6 v 4 (lanes kernel)", |b| {
        b.iter(|| kernel.record_many(&mut dice, BATCH, &mut h))
    });
    black_box(&h);
    let (field, prepared) = built_in_field_12_v_8();
    let table = battlelab_core::systems::field::transitions::TransitionTable::compile(
        &field,
        &prepared,
        battlelab_core::systems::field::transitions::MAX_TABLE_ENTRIES,
    )
    .expect("small");
    let kernel = battlelab_core::systems::field::transitions::FieldKernel::Table(&table);
    let mut h = battlelab_core::systems::field::battle::BattleHistogram::new(
        &prepared,
        field.rules().round_limit,
    );
    let mut dice = DiceStream::for_block(1, 0);
    group.bench_function(
        "built-in field battle 12 v 8, mixed tactics (lanes kernel)",
        |b| b.iter(|| kernel.fight_block(&mut dice, BATCH, &mut h)),
    );
    black_box(&h);
    for (name, study) in [
        (
            "rules file: field battle 12 v 8, mixed tactics",
            scenarios::field_12_v_8(),
        ),
        (
            "rules file: naval engagement 6 v 4",
            scenarios::naval_engagement_6_v_4(),
        ),
        (
            "rules file: classic CRT, one roll",
            scenarios::classic_crt(),
        ),
        ("rules file: Risk 30 v 30", scenarios::risk_30_v_30()),
        (
            "rules file: dice pool 10 v 10",
            scenarios::dice_pool_10_v_10(),
        ),
    ] {
        let mut dice = DiceStream::for_block(1, 0);
        let mut counts = study.empty(0);
        group.bench_function(name, |b| {
            b.iter(|| study.simulate(0, &mut dice, BATCH, &mut counts))
        });
        black_box(&counts);
    }
    group.finish();

    let mut group = c.benchmark_group("rules files, exact");
    group.sample_size(10);
    for (name, make) in [
        (
            "classic CRT, one roll (parse, chain, exact)",
            scenarios::classic_crt as fn() -> _,
        ),
        (
            "Risk 30 v 30 (parse, chain, exact)",
            scenarios::risk_30_v_30,
        ),
        (
            "dice pool 10 v 10 (parse, chain, exact)",
            scenarios::dice_pool_10_v_10,
        ),
        (
            "naval engagement 6 v 4 (parse, chain, exact)",
            scenarios::naval_engagement_6_v_4,
        ),
        (
            "field battle 12 v 8, mixed tactics (parse, chain, exact)",
            scenarios::field_12_v_8,
        ),
    ] {
        group.bench_function(name, |b| b.iter(|| black_box(make().exact(0))));
    }
    // The enumeration alone, from the file read once: the chain built and solved in
    // floating point, as the built-in's exact distribution is (its battle is prepared
    // once too).
    for (name, make) in [
        (
            "naval engagement 6 v 4 (chain, exact in floating point)",
            scenarios::naval_engagement_6_v_4 as fn() -> _,
        ),
        (
            "field battle 12 v 8, mixed tactics (chain, exact in floating point)",
            scenarios::field_12_v_8,
        ),
    ] {
        let study = make();
        let (game, base) = (study.game(0), &study.runs[0].base);
        let compare = Prepared::of(game);
        group.bench_function(name, |b| {
            b.iter(|| {
                let chain = Chain::build(game, &compare, base).expect("small");
                let order = chain.order().expect("a battle that ends");
                black_box(chain.absorption_f64(&order))
            })
        });
    }
    let (naval, engagement) = battlelab_core::scenarios::naval();
    let (field, prepared) = built_in_field_12_v_8();
    group.bench_function("built-in field battle 12 v 8, exact", |b| {
        b.iter(|| black_box(field.battle_distribution(black_box(&prepared), 1_000_000)))
    });
    group.bench_function("built-in naval engagement 6 v 4, exact", |b| {
        b.iter(|| black_box(naval.distribution(&engagement)))
    });
    group.finish();
}

criterion_group!(benches, rules_file);
