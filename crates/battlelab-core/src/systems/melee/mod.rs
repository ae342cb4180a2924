//! The melee study (docs/systems/melee.md): named unit profiles, an engagement (one unit
//! engaged by up to four from front, flanks and rear) swept over stats and compared across
//! rule variants, or a round robin of every profile against every other with Bradley–Terry
//! strengths as point-value hints.
//!
//! Why this module exists: it is the analysis-file boundary and report for
//! [`crate::systems::melee::engagement`]. Every check happens here once — unknown keys, profile names,
//! facings, every stat at every grid point — so a run cannot fail on input. Reports have
//! the shape of every other system: results with Wilson intervals beside the exact
//! enumeration, expectations, survival by phase, the exact first phase, charts, rulebook
//! tables and a manifest.
//!
//! ```toml
//! system = "melee"
//! seed = 1
//! trials = 200_000
//! exact = true                  # exact first phase and exact engagements where they fit
//!
//! [options]
//! break_dice = "2d6"            # [option] 1d6 | 2d6 | 3d6
//! round_limit = 6               # [option] combat phases, 1–50
//!
//! [profiles.spearmen]           # any number of named profiles
//! models = 20
//! frontage = 5                  # models wide
//! attacks = 1                   # stats 1–10
//! skill = 3
//! power = 3
//! defense = 3
//! discipline = 7
//! wounds = 1                    # per model (default 1)
//! rank_bonus = "ranks"          # [option] ranks | full-ranks | none
//! rank_bonus_cap = 3            # [option] 0–10
//! points = 60                   # optional cost, for the round robin's value hints
//!
//! [engagement]                  # side A's unit, engaged by side B's units
//! a = "spearmen"
//! b = [{ unit = "swordsmen", facing = "front" }, { unit = "riders", facing = "flank" }]
//!
//! [sweep]                       # a.<stat> (A's unit), b.<stat> (every B unit), round_limit
//! a.skill = { from = 1, to = 6 }
//! b.defense = [1, 2, 3, 4, 5, 6]
//!
//! [[variant]]
//! name = "full ranks"
//! a = { rank_bonus = "full-ranks" }   # profile overrides for A's unit
//! b = { discipline = 8 }              # … and for every B unit
//! options = { break_dice = "3d6" }
//!
//! # Instead of [engagement]: every profile against every other, front to front.
//! [round_robin]
//! profiles = ["spearmen", "swordsmen", "riders"]   # default: every profile
//! ```

pub mod derived;
pub mod engagement;
pub mod one_roll;
pub mod ratings;
#[doc(hidden)]
pub mod scenarios;

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::json;
use toml::Spanned;

use crate::analysis::{self, AnalysisError, AxisValue, Source, SweepAxis};
use crate::engine::headline::{Headline, Match};
use crate::header::{analysis_file, AnalysisHeader};
use crate::keys::{self, key, KeyDoc, PricedAt, SystemDoc, Ty, ValueDoc, REQUIRED};
use crate::systems::melee::engagement::{
    BreakDice, Engagement, EngagementEnd, EngagementHistogram, EngagementOdds, Facing, MeleeCombat,
    PhaseOdds, RankBonusRule, UnitProfile, END_COUNT, MAX_B_UNITS, MAX_MODELS, MAX_ROUND_LIMIT,
    STAT_MAX,
};
use crate::systems::melee::ratings::{
    bradley_terry, elo, points_hints, PointsHint, RoundRobinTable,
};

/// Profile stats a sweep or a variant can set, with their allowed range.
const STATS: [(&str, u32, u32); 9] = [
    ("models", 1, MAX_MODELS),
    ("frontage", 1, MAX_MODELS),
    ("attacks", 1, STAT_MAX),
    ("skill", 1, STAT_MAX),
    ("power", 1, STAT_MAX),
    ("defense", 1, STAT_MAX),
    ("discipline", 1, STAT_MAX),
    ("wounds", 1, STAT_MAX),
    ("rank_bonus_cap", 0, STAT_MAX),
];

/// Stats every profile must state (the rest have defaults).
const REQUIRED_STATS: [&str; 7] = [
    "models",
    "frontage",
    "attacks",
    "skill",
    "power",
    "defense",
    "discipline",
];

/// What a melee study can sweep.
pub const PARAMETERS: [&str; 19] = [
    "a.models",
    "a.frontage",
    "a.attacks",
    "a.skill",
    "a.power",
    "a.defense",
    "a.discipline",
    "a.wounds",
    "a.rank_bonus_cap",
    "b.models",
    "b.frontage",
    "b.attacks",
    "b.skill",
    "b.power",
    "b.defense",
    "b.discipline",
    "b.wounds",
    "b.rank_bonus_cap",
    "round_limit",
];

/// Most profiles in a round robin (its matrix has n² runs).
pub const MAX_ROUND_ROBIN: usize = 24;

/// One engagement of the study, compiled.
#[derive(Debug, Clone)]
pub struct MeleeRun {
    pub variant: usize,
    pub coordinates: Vec<AxisValue>,
    /// In a round robin: (A's profile, B's profile), indices into `profile_names`.
    pub pairing: Option<(usize, usize)>,
    pub combat: MeleeCombat,
}

/// A validated melee study.
#[derive(Debug, Clone)]
pub struct MeleeStudy {
    pub header: AnalysisHeader,
    /// The engagement as written: A's profile name and B's (facing, profile name).
    pub a_name: String,
    pub b_names: Vec<(Facing, String)>,
    /// Round-robin profiles (names and optional points), empty for an engagement study.
    pub round_robin: Vec<(String, Option<u32>)>,
    pub variants: Vec<String>,
    pub axes: Vec<SweepAxis>,
    pub runs: Vec<MeleeRun>,
}

analysis_file! {
    struct MeleeFile {
        exact,
        #[serde(default)]
        options: OptionsSpec,
        profiles: Option<Spanned<BTreeMap<String, Spanned<ProfileSpec>>>>,
        engagement: Option<Spanned<EngagementSpec>>,
        round_robin: Option<Spanned<RoundRobinSpec>>,
        sweep: Option<BTreeMap<String, Spanned<toml::Value>>>,
        variant: Option<Vec<VariantSpec>>,
    }
}

#[derive(Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
struct OptionsSpec {
    break_dice: Option<Spanned<String>>,
    round_limit: Option<Spanned<i64>>,
}

#[derive(Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
struct ProfileSpec {
    models: Option<Spanned<i64>>,
    frontage: Option<Spanned<i64>>,
    attacks: Option<Spanned<i64>>,
    skill: Option<Spanned<i64>>,
    power: Option<Spanned<i64>>,
    defense: Option<Spanned<i64>>,
    discipline: Option<Spanned<i64>>,
    wounds: Option<Spanned<i64>>,
    rank_bonus: Option<Spanned<String>>,
    rank_bonus_cap: Option<Spanned<i64>>,
    points: Option<Spanned<i64>>,
}

impl ProfileSpec {
    fn stat(&self, name: &str) -> Option<&Spanned<i64>> {
        match name {
            "models" => self.models.as_ref(),
            "frontage" => self.frontage.as_ref(),
            "attacks" => self.attacks.as_ref(),
            "skill" => self.skill.as_ref(),
            "power" => self.power.as_ref(),
            "defense" => self.defense.as_ref(),
            "discipline" => self.discipline.as_ref(),
            "wounds" => self.wounds.as_ref(),
            "rank_bonus_cap" => self.rank_bonus_cap.as_ref(),
            _ => None,
        }
    }
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct EngagementSpec {
    a: Spanned<String>,
    b: Spanned<Vec<Spanned<EngagerSpec>>>,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct EngagerSpec {
    unit: Spanned<String>,
    facing: Option<Spanned<String>>,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct RoundRobinSpec {
    profiles: Option<Vec<Spanned<String>>>,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct VariantSpec {
    /// Read by [`AnalysisHeader::parse`].
    #[allow(dead_code)]
    name: Spanned<String>,
    a: Option<ProfileSpec>,
    b: Option<ProfileSpec>,
    options: Option<OptionsSpec>,
}

/// Every key of a melee file (`battlelab keys melee`), beside the structs above that parse
/// them.
pub const KEYS: &[&[KeyDoc]] = &[keys::HEADER, keys::EXACT, MELEE_KEYS, keys::EXPECT_VALUE];

const STAT: Ty = Ty::Int(1, STAT_MAX as i64);

const MELEE_KEYS: &[KeyDoc] = &[
    key(
        "options.break_dice",
        Ty::OneOf(&["1d6", "2d6", "3d6"]),
        "\"2d6\"",
        "[option] dice of the break test",
        "\"3d6\"",
    )
    .in_variant(),
    key(
        "options.round_limit",
        Ty::Int(1, MAX_ROUND_LIMIT as i64),
        "6",
        "[option] combat phases before the engagement is called off",
        "6",
    )
    .sweep("round_limit")
    .in_variant(),
    key(
        "profiles.<name>.models",
        Ty::Int(1, MAX_MODELS as i64),
        REQUIRED,
        "models in the unit",
        "20",
    )
    .sweep("{a,b}.models")
    .variant("[[variant]].{a,b}.models")
    .priced_as("", PricedAt::SideProfiles)
    .searched(1, 40),
    key(
        "profiles.<name>.frontage",
        Ty::Int(1, MAX_MODELS as i64),
        REQUIRED,
        "models wide (the front rank)",
        "5",
    )
    .sweep("{a,b}.frontage")
    .variant("[[variant]].{a,b}.frontage"),
    key(
        "profiles.<name>.attacks",
        STAT,
        REQUIRED,
        "attacks per front-rank model",
        "1",
    )
    .sweep("{a,b}.attacks")
    .variant("[[variant]].{a,b}.attacks")
    .priced_as("", PricedAt::SideProfiles)
    .searched(1, 6),
    key(
        "profiles.<name>.skill",
        STAT,
        REQUIRED,
        "skill: to hit",
        "3",
    )
    .sweep("{a,b}.skill")
    .variant("[[variant]].{a,b}.skill")
    .priced_as("", PricedAt::SideProfiles),
    key(
        "profiles.<name>.power",
        STAT,
        REQUIRED,
        "power: to wound",
        "3",
    )
    .sweep("{a,b}.power")
    .variant("[[variant]].{a,b}.power")
    .priced_as("", PricedAt::SideProfiles),
    key(
        "profiles.<name>.defense",
        STAT,
        REQUIRED,
        "defense: the save",
        "3",
    )
    .sweep("{a,b}.defense")
    .variant("[[variant]].{a,b}.defense")
    .priced_as("", PricedAt::SideProfiles),
    key(
        "profiles.<name>.discipline",
        STAT,
        REQUIRED,
        "discipline: the break test",
        "7",
    )
    .sweep("{a,b}.discipline")
    .variant("[[variant]].{a,b}.discipline")
    .priced_as("", PricedAt::SideProfiles),
    key("profiles.<name>.wounds", STAT, "1", "wounds per model", "1")
        .sweep("{a,b}.wounds")
        .variant("[[variant]].{a,b}.wounds"),
    key(
        "profiles.<name>.rank_bonus",
        Ty::OneOf(&["ranks", "full-ranks", "none"]),
        "\"ranks\"",
        "[option] which ranks count for the rank bonus",
        "\"full-ranks\"",
    )
    .variant("[[variant]].{a,b}.rank_bonus"),
    key(
        "profiles.<name>.rank_bonus_cap",
        Ty::Int(0, STAT_MAX as i64),
        "3",
        "[option] the rank bonus is at most this",
        "3",
    )
    .sweep("{a,b}.rank_bonus_cap")
    .variant("[[variant]].{a,b}.rank_bonus_cap"),
    key(
        "profiles.<name>.points",
        Ty::Int(1, 1_000_000),
        "none",
        "the unit's cost, for the round robin's value hints",
        "60",
    ),
    key(
        "engagement.a",
        Ty::Text,
        "none (or [round_robin])",
        "side A's unit (a profile name), the one engaged",
        "\"spearmen\"",
    ),
    key(
        "engagement.b[].unit",
        Ty::Text,
        REQUIRED,
        "a side-B unit engaging A (a profile name); 1 front, 2 flanks, 1 rear at most",
        "\"swordsmen\"",
    ),
    key(
        "engagement.b[].facing",
        Ty::OneOf(&["front", "flank", "rear"]),
        "\"front\"",
        "where the B unit engages A",
        "\"flank\"",
    ),
    key(
        "round_robin.profiles",
        Ty::TextList,
        "every profile",
        "instead of [engagement]: every listed profile against every other",
        "[\"spearmen\", \"swordsmen\"]",
    ),
    key(
        "[[variant]].name",
        Ty::Text,
        REQUIRED,
        "the variant's name",
        "\"as written\"",
    ),
];

/// This system in [`crate::systems::REGISTRY`].
pub const REGISTRATION: crate::systems::Registration = crate::systems::Registration {
    folder: "melee",
    docs: &[DOC],
    benches: &["melee"],
    one_roll: one_roll::TABLES,
    parse: |path, text, _| crate::systems::study(MeleeStudy::parse(path, text)),
};

/// `battlelab keys` and `battlelab new` for melee studies.
pub const DOC: SystemDoc = SystemDoc {
    companion: None,
    name: "melee",
    summary: "melee engagements (docs/systems/melee.md): unit profiles, one unit engaged front/flank/rear, or a round robin",
    keys: KEYS,
    starter: "system = \"melee\"\ntrials = 10_000\n\n[options]\nbreak_dice = \"2d6\"            # [option] 1d6 | 2d6 | 3d6\nround_limit = 6               # [option] combat phases, 1-50\n\n[profiles.spearmen]\nmodels = 20\nfrontage = 5                  # models wide\nattacks = 1                   # stats 1-10\nskill = 3\npower = 3\ndefense = 4\ndiscipline = 7\n\n[profiles.swordsmen]\nmodels = 15\nfrontage = 5\nattacks = 1\nskill = 4\npower = 3\ndefense = 3\ndiscipline = 7\n\n[engagement]                  # side A's unit, engaged by side B's units\na = \"spearmen\"\nb = [{ unit = \"swordsmen\", facing = \"front\" }]\n\n[[variant]]\nname = \"as written\"\n\n[[variant]]\nname = \"veteran spearmen\"\na = { discipline = 8 }\n",
    value: ValueDoc {
        headlines,
        default_modifiers: &[
            "a.attacks+1",
            "a.skill+1",
            "a.power+1",
            "a.defense+1",
            "a.discipline+1",
            "a.models+1",
        ],
        currency: Some(("a.skill", "points of skill")),
        odds_columns: None,
    },
};

/// What `value` reads first: P(A wins) — B destroyed or fleeing — then each side's
/// models lost.
fn headlines() -> Vec<Headline> {
    vec![
        Headline::outcomes(
            "a_wins",
            "P(A wins) = P(B destroyed or flees)",
            Match::Is(vec!["B destroyed".into(), "B flees".into()]),
        ),
        Headline::metric("models_lost_b"),
        Headline::metric("models_lost_a"),
    ]
}

/// Applies a profile's (or an override's) values onto `unit`, checking each range.
fn apply_profile(
    source: &Source,
    spec: &ProfileSpec,
    field: &str,
    unit: &mut UnitProfile,
) -> Result<(), AnalysisError> {
    for (name, lo, hi) in STATS {
        if let Some(v) = spec.stat(name) {
            let value = source.int_in(v, &format!("{field}.{name}"), lo.into(), hi.into(), name)?;
            set_stat(unit, name, value as u32);
        }
    }
    if let Some(v) = &spec.rank_bonus {
        unit.rank_bonus = RankBonusRule::parse(v.get_ref()).ok_or_else(|| {
            source.error(
                v,
                format!("{field}.rank_bonus"),
                format!(
                    "unknown rank-bonus rule \"{}\"; allowed: {}",
                    v.get_ref(),
                    RankBonusRule::NAMES
                ),
            )
        })?;
    }
    Ok(())
}

fn set_stat(unit: &mut UnitProfile, name: &str, value: u32) {
    match name {
        "models" => unit.models = value,
        "frontage" => unit.frontage = value,
        "attacks" => unit.attacks = value,
        "skill" => unit.skill = value,
        "power" => unit.power = value,
        "defense" => unit.defense = value,
        "discipline" => unit.discipline = value,
        "wounds" => unit.wounds = value,
        _ => unit.rank_bonus_cap = value,
    }
}

/// The break dice and round limit, from the file's options and a variant's.
fn apply_options(
    source: &Source,
    spec: &OptionsSpec,
    field: &str,
    options: &mut (BreakDice, u32),
) -> Result<(), AnalysisError> {
    if let Some(v) = &spec.break_dice {
        options.0 = BreakDice::parse(v.get_ref()).ok_or_else(|| {
            source.error(
                v,
                format!("{field}.break_dice"),
                format!(
                    "unknown break dice \"{}\"; allowed: {}",
                    v.get_ref(),
                    BreakDice::NAMES
                ),
            )
        })?;
    }
    if let Some(v) = &spec.round_limit {
        options.1 = source.int_in(
            v,
            &format!("{field}.round_limit"),
            1,
            MAX_ROUND_LIMIT.into(),
            "the round limit (combat phases before the engagement is called off)",
        )? as u32;
    }
    Ok(())
}

/// The profiles as read, by name: the unit, its point cost, and the line of its table.
type Profiles = BTreeMap<String, (UnitProfile, Option<u32>, usize)>;

/// The break dice and the round limit.
type MeleeOptions = (BreakDice, u32);

/// A variant as read: its name, its overrides of A's and B's profiles and of the options.
type MeleeVariant = (String, ProfileSpec, ProfileSpec, OptionsSpec);

/// Side B's units, each with the facing of side A's unit it engages.
type SideB = Vec<(Facing, UnitProfile)>;

/// Side B's units as written: each facing and profile name.
type SideBNames = Vec<(Facing, String)>;

/// A round robin's profiles: each name with its point cost, if given.
type RoundRobinProfiles = Vec<(String, Option<u32>)>;

impl MeleeStudy {
    pub fn parse(path: &Path, text: &str) -> Result<Self, AnalysisError> {
        let source = Source::new(path, text);
        let spec: MeleeFile = source.parse_toml()?;
        let header = AnalysisHeader::parse(path, &source, None)?;
        let mut options = (BreakDice::TwoD6, 6u32);
        apply_options(&source, &spec.options, "options", &mut options)?;
        let profiles = profiles(&source, &spec)?;
        let mut variants = variants(&source, &spec, &header)?;
        if variants.is_empty() {
            variants.push((
                "base".into(),
                ProfileSpec::default(),
                ProfileSpec::default(),
                OptionsSpec::default(),
            ));
        }
        let (runs, round_robin, axes, a_name, b_names) = match (&spec.engagement, &spec.round_robin) {
            (Some(_), Some(rr)) => {
                return Err(source.error(
                    rr,
                    "round_robin",
                    "a file is either one [engagement] (with sweeps) or a [round_robin]; remove one of them",
                ))
            }
            (None, None) => {
                return Err(source.error_at(
                    None,
                    "engagement",
                    "nothing to fight; add [engagement] (a = \"<profile>\", b = [{ unit = \"<profile>\", facing = \"front\" }]) or [round_robin]",
                ))
            }
            (None, Some(rr)) => {
                let (runs, round_robin) =
                    round_robin_runs(&source, &spec, &header, rr, &profiles, options)?;
                (runs, round_robin, Vec::new(), String::new(), Vec::new())
            }
            (Some(e), None) => {
                let e = e.get_ref();
                let (axes, b_names, runs) =
                    engagement_runs(&source, &spec, &header, e, &profiles, &variants, options)?;
                let a_name = e.a.get_ref().trim().to_string();
                (runs, Vec::new(), axes, a_name, b_names)
            }
        };
        Ok(Self {
            header,
            a_name,
            b_names,
            round_robin,
            variants: variants.into_iter().map(|v| v.0).collect(),
            axes,
            runs,
        })
    }

    pub fn is_round_robin(&self) -> bool {
        !self.round_robin.is_empty()
    }
}

/// `[profiles.<name>]`: each profile's name, its required stats, its stats in range and
/// valid together, and its point cost.
fn profiles(source: &Source, spec: &MeleeFile) -> Result<Profiles, AnalysisError> {
    let Some(profile_specs) = &spec.profiles else {
        return Err(source.error_at(
            None,
            "profiles",
            "no unit profiles; add at least one [profiles.<name>] table with models, frontage, attacks, skill, power, defense, discipline",
        ));
    };
    let mut profiles = Profiles::new();
    for (pname, p) in profile_specs.get_ref() {
        let field = format!("profiles.{pname}");
        analysis::report_text_at(
            source,
            p,
            pname,
            &field,
            "a profile's name",
            analysis::Lines::One,
        )?;
        let missing: Vec<&str> = REQUIRED_STATS
            .iter()
            .copied()
            .filter(|stat| p.get_ref().stat(stat).is_none())
            .collect();
        if !missing.is_empty() {
            return Err(source.error(
                p,
                field,
                format!(
                    "the profile does not give {}; every profile states {} (wounds, rank_bonus and rank_bonus_cap default to 1, \"ranks\" and 3)",
                    missing.join(", "),
                    REQUIRED_STATS.join(", ")
                ),
            ));
        }
        let mut unit = UnitProfile::default();
        apply_profile(source, p.get_ref(), &field, &mut unit)?;
        let line = source.line_of(p.span());
        unit.validate(&field).map_err(|e| {
            let stat = e.field.rsplit('.').next().unwrap_or("");
            let at = p
                .get_ref()
                .stat(stat)
                .map_or(line, |v| source.line_of(v.span()));
            source.error_at(Some(at), e.field.clone(), e.message)
        })?;
        let points = match &p.get_ref().points {
            Some(v) => {
                Some(
                    source.int_in(v, &format!("{field}.points"), 1, 1_000_000, "a point cost")?
                        as u32,
                )
            }
            None => None,
        };
        profiles.insert(pname.clone(), (unit, points, line));
    }
    if profiles.is_empty() {
        return Err(source.error(
            profile_specs,
            "profiles",
            "no unit profiles; add at least one [profiles.<name>] table",
        ));
    }
    Ok(profiles)
}

/// The profile `name` refers to, or an error listing the file's profiles.
fn profile_named(
    source: &Source,
    profiles: &Profiles,
    name: &Spanned<String>,
    field: &str,
) -> Result<UnitProfile, AnalysisError> {
    profiles
        .get(name.get_ref().trim())
        .map(|p| p.0.clone())
        .ok_or_else(|| {
            source.error(
                name,
                field,
                format!(
                    "no profile \"{}\"; profiles in this file: {}",
                    name.get_ref(),
                    profiles.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            )
        })
}

/// The `[[variant]]`s' overrides, in file order (empty where the file has none); a
/// variant changes rules, not point costs.
fn variants(
    source: &Source,
    spec: &MeleeFile,
    header: &AnalysisHeader,
) -> Result<Vec<MeleeVariant>, AnalysisError> {
    let mut variants = Vec::new();
    for (i, (v, heading)) in spec
        .variant
        .iter()
        .flatten()
        .zip(&header.variants)
        .enumerate()
    {
        for (side, over) in [("a", &v.a), ("b", &v.b)] {
            if let Some(points) = over.as_ref().and_then(|o| o.points.as_ref()) {
                return Err(source.error(
                    points,
                    format!("variant[{i}].{side}.points"),
                    "a variant changes rules, not costs; give points in [profiles.<name>] (they are used by the round robin)",
                ));
            }
        }
        variants.push((
            heading.name.clone(),
            v.a.clone().unwrap_or_default(),
            v.b.clone().unwrap_or_default(),
            v.options.clone().unwrap_or_default(),
        ));
    }
    Ok(variants)
}

/// A `[round_robin]`: every ordered pair of its profiles fought front to front, with the
/// profiles' names and point costs. It fights the profiles as written, so a sweep or a
/// variant is refused.
fn round_robin_runs(
    source: &Source,
    spec: &MeleeFile,
    header: &AnalysisHeader,
    rr: &Spanned<RoundRobinSpec>,
    profiles: &Profiles,
    options: MeleeOptions,
) -> Result<(Vec<MeleeRun>, RoundRobinProfiles), AnalysisError> {
    if let Some(sweep) = &spec.sweep {
        let first = sweep.iter().next();
        return Err(source.error_at(
            first.map(|(_, v)| source.line_of(v.span())).or(Some(source.line_of(rr.span()))),
            first.map_or("sweep".to_string(), |(key, _)| format!("sweep.{key}")),
            "a round robin fights the profiles as written; remove [sweep], or write an [engagement] file to sweep stats",
        ));
    }
    if let Some(v) = header.variants.first() {
        return Err(source.error_at(
            Some(v.line),
            "variant[0]",
            "a round robin fights the profiles as written; compare rules with variants in an [engagement] file, or write one round-robin file per rule",
        ));
    }
    let names = round_robin_names(source, rr, profiles)?;
    let mut runs = Vec::new();
    for (i, a) in names.iter().enumerate() {
        for (j, b) in names.iter().enumerate() {
            let engagement = Engagement {
                a: profiles[a].0.clone(),
                b: vec![(Facing::Front, profiles[b].0.clone())],
                break_dice: options.0,
                round_limit: options.1,
            };
            let combat =
                MeleeCombat::new(engagement).map_err(|e| source.error(rr, e.field, e.message))?;
            runs.push(MeleeRun {
                variant: 0,
                coordinates: Vec::new(),
                pairing: Some((i, j)),
                combat,
            });
        }
    }
    let round_robin = names
        .into_iter()
        .map(|n| {
            let points = profiles[&n].1;
            (n, points)
        })
        .collect();
    Ok((runs, round_robin))
}

/// `round_robin.profiles`, checked (each a profile, none twice), else every profile; 2
/// to [`MAX_ROUND_ROBIN`] of them.
fn round_robin_names(
    source: &Source,
    rr: &Spanned<RoundRobinSpec>,
    profiles: &Profiles,
) -> Result<Vec<String>, AnalysisError> {
    let names: Vec<String> = match &rr.get_ref().profiles {
        Some(list) => {
            let mut names = Vec::new();
            for (i, n) in list.iter().enumerate() {
                let field = format!("round_robin.profiles[{i}]");
                profile_named(source, profiles, n, &field)?;
                let name = n.get_ref().trim().to_string();
                if names.contains(&name) {
                    return Err(source.error(n, field, format!("\"{name}\" is listed twice")));
                }
                names.push(name);
            }
            names
        }
        None => profiles.keys().cloned().collect(),
    };
    if names.len() < 2 || names.len() > MAX_ROUND_ROBIN {
        return Err(source.error(
            rr,
            "round_robin.profiles",
            format!(
                "a round robin needs 2 to {MAX_ROUND_ROBIN} profiles, got {}; list them in round_robin.profiles (or leave it out for every profile)",
                names.len()
            ),
        ));
    }
    Ok(names)
}

/// An `[engagement]` file: side A's profile against side B's units, every variant at
/// every grid point. Returns the sweep's axes, B's facings and profile names, and the
/// runs.
fn engagement_runs(
    source: &Source,
    spec: &MeleeFile,
    header: &AnalysisHeader,
    e: &EngagementSpec,
    profiles: &Profiles,
    variants: &[MeleeVariant],
    options: MeleeOptions,
) -> Result<(Vec<SweepAxis>, SideBNames, Vec<MeleeRun>), AnalysisError> {
    let a_name = e.a.get_ref().trim().to_string();
    let a_unit = profile_named(source, profiles, &e.a, "engagement.a")?;
    let (b_names, b_units) = side_b(source, e, profiles)?;
    let (axes, lines) = analysis::sweep_axes(source, spec.sweep.as_ref(), &PARAMETERS)?;
    analysis::check_grid_size(source, &axes, variants.len())?;
    let grid = EngagementGrid {
        source,
        axes: &axes,
        lines: &lines,
        a_line: profiles[&a_name].2,
        b_line: source.line_of(e.b.span()),
        named_variants: !header.variants.is_empty(),
    };
    let mut runs = Vec::new();
    for (vi, variant) in variants.iter().enumerate() {
        let (a0, b0, options0) =
            variant_engagement(source, header, vi, variant, &a_unit, &b_units, options)?;
        for coordinates in analysis::grid(&axes) {
            runs.push(grid.run(vi, &variant.0, (&a0, &b0, options0), coordinates)?);
        }
    }
    Ok((axes, b_names, runs))
}

/// `engagement.b`: each unit's profile and facing (1 to [`MAX_B_UNITS`] units, at most one
/// front, two flanks and one rear), as names and as units.
fn side_b(
    source: &Source,
    e: &EngagementSpec,
    profiles: &Profiles,
) -> Result<(SideBNames, SideB), AnalysisError> {
    let mut b_names = Vec::new();
    let mut b_units = Vec::new();
    if e.b.get_ref().is_empty() {
        return Err(source.error(
            &e.b,
            "engagement.b",
            "side B has no unit: list at least one { unit = \"<profile>\", facing = \"front\" }",
        ));
    }
    for (i, entry) in e.b.get_ref().iter().enumerate() {
        let entry_ref = entry.get_ref();
        let unit = profile_named(
            source,
            profiles,
            &entry_ref.unit,
            &format!("engagement.b[{i}].unit"),
        )?;
        let facing = match &entry_ref.facing {
            Some(f) => Facing::parse(f.get_ref().trim()).ok_or_else(|| {
                source.error(
                    f,
                    format!("engagement.b[{i}].facing"),
                    format!(
                        "unknown facing \"{}\"; allowed: {} (where this unit engages side A's unit)",
                        f.get_ref(),
                        Facing::NAMES
                    ),
                )
            })?,
            None => Facing::Front,
        };
        b_names.push((facing, entry_ref.unit.get_ref().trim().to_string()));
        b_units.push((facing, unit));
    }
    if b_units.len() > MAX_B_UNITS {
        return Err(source.error(
            &e.b,
            "engagement.b",
            format!(
                "{} units on side B: at most {MAX_B_UNITS} (one front, two flanks, one rear)",
                b_units.len()
            ),
        ));
    }
    for (facing, limit) in [(Facing::Front, 1), (Facing::Flank, 2), (Facing::Rear, 1)] {
        let entries: Vec<String> = b_units
            .iter()
            .enumerate()
            .filter(|(_, (f, _))| *f == facing)
            .map(|(i, _)| format!("engagement.b[{i}]"))
            .collect();
        if entries.len() > limit {
            return Err(source.error(
                &e.b,
                "engagement.b",
                format!(
                    "{} all engage the {}; a unit has one front, two flanks and one rear, so at most {limit} (give the others another facing)",
                    entries.join(", "),
                    facing.name()
                ),
            ));
        }
    }
    Ok((b_names, b_units))
}

/// Variant `vi`'s engagement: A's unit, B's units and the options with its overrides,
/// every unit still valid on its own.
fn variant_engagement(
    source: &Source,
    header: &AnalysisHeader,
    vi: usize,
    (vname, a_over, b_over, o_over): &MeleeVariant,
    a_unit: &UnitProfile,
    b_units: &SideB,
    options: MeleeOptions,
) -> Result<(UnitProfile, SideB, MeleeOptions), AnalysisError> {
    let vfield = |f: &str| format!("variant[{vi}].{f}");
    let mut a0 = a_unit.clone();
    apply_profile(source, a_over, &vfield("a"), &mut a0)?;
    let mut b0 = b_units.clone();
    for (_, unit) in &mut b0 {
        apply_profile(source, b_over, &vfield("b"), unit)?;
    }
    let mut options0 = options;
    apply_options(source, o_over, &vfield("options"), &mut options0)?;
    // A variant's overrides must leave every unit valid on their own.
    let variant_name_line = header.variants.get(vi).map(|v| v.line);
    let checks =
        std::iter::once((&a0, a_over, "a")).chain(b0.iter().map(|(_, u)| (u, b_over, "b")));
    for (unit, over, side) in checks {
        unit.validate(&vfield(side)).map_err(|err| {
            let stat = err.field.rsplit('.').next().unwrap_or("");
            let line = over
                .stat(stat)
                .map(|v| source.line_of(v.span()))
                .or(variant_name_line);
            source.error_at(
                line,
                err.field.clone(),
                format!("{} (variant {vname})", err.message),
            )
        })?;
    }
    Ok((a0, b0, options0))
}

/// What an `[engagement]` file's grid points are built from, once its sides and sweep
/// are read.
struct EngagementGrid<'a> {
    source: &'a Source<'a>,
    axes: &'a [SweepAxis],
    /// The line of each axis's `[sweep]` entry.
    lines: &'a [Option<usize>],
    /// The line of side A's profile table, for errors about side A.
    a_line: usize,
    /// The line of `engagement.b`, for errors about side B.
    b_line: usize,
    /// Whether the file names its variants (a point's description names the variant).
    named_variants: bool,
}

impl EngagementGrid<'_> {
    /// Variant `vi`'s engagement (A's unit, B's units, the options) at one grid point:
    /// each swept stat and round limit checked and set, then the engagement compiled.
    fn run(
        &self,
        vi: usize,
        vname: &str,
        (a0, b0, options0): (&UnitProfile, &SideB, MeleeOptions),
        coordinates: Vec<AxisValue>,
    ) -> Result<MeleeRun, AnalysisError> {
        let source = self.source;
        let (mut a, mut b, mut opts) = (a0.clone(), b0.clone(), options0);
        // The line of the sweep that set each side's stats, for errors.
        let mut side_line: [Option<usize>; 2] = [None, None];
        for ((axis, value), line) in self.axes.iter().zip(&coordinates).zip(self.lines) {
            let AxisValue::Int(x) = *value else { continue };
            let field = format!("sweep.{}", axis.parameter);
            if axis.parameter == "round_limit" {
                if !(1..=i64::from(MAX_ROUND_LIMIT)).contains(&x) {
                    return Err(source.error_at(
                        *line,
                        field,
                        format!("the round limit must be 1 to {MAX_ROUND_LIMIT}, got {x}"),
                    ));
                }
                opts.1 = x as u32;
                continue;
            }
            let (side, stat) = axis
                .parameter
                .split_once('.')
                .expect("a.<stat> or b.<stat>");
            let (_, lo, hi) = STATS.iter().find(|s| s.0 == stat).expect("a listed stat");
            if !(i64::from(*lo)..=i64::from(*hi)).contains(&x) {
                return Err(source.error_at(*line, field, format!("the sweep reaches {stat} {x}; {stat} is {lo} to {hi}, so keep the sweep within that range")));
            }
            if side == "a" {
                set_stat(&mut a, stat, x as u32);
            } else {
                for (_, unit) in &mut b {
                    set_stat(unit, stat, x as u32);
                }
            }
            let slot = usize::from(side == "b");
            side_line[slot] = side_line[slot].or(*line);
        }
        let at = analysis::describe_point(
            self.axes,
            &coordinates,
            self.named_variants.then_some(vname),
        );
        let engagement = Engagement {
            a,
            b,
            break_dice: opts.0,
            round_limit: opts.1,
        };
        let combat = MeleeCombat::new(engagement).map_err(|err| {
            let line = if err.field.starts_with("a.") {
                side_line[0].or(side_line[1]).or(Some(self.a_line))
            } else {
                side_line[1].or(side_line[0]).or(Some(self.b_line))
            };
            source.error_at(
                line,
                format!("engagement.{}", err.field),
                format!("{}{at}", err.message),
            )
        })?;
        Ok(MeleeRun {
            variant: vi,
            coordinates,
            pairing: None,
            combat,
        })
    }
}

/// One run's results: the simulated engagements, and the exact odds where computed.
#[derive(Debug, Clone)]
pub struct MeleeRunResult {
    pub histogram: EngagementHistogram,
    pub exact: Option<EngagementOdds>,
    /// The exact first phase (always computed when the study is exact).
    pub phase: Option<PhaseOdds>,
}

#[derive(Debug, Clone)]
pub struct MeleeResults {
    pub trials: u64,
    pub seed: u64,
    pub runs: Vec<MeleeRunResult>,
}

impl MeleeResults {
    /// The engine's results of a melee study, run by run.
    pub fn of(results: &crate::engine::driver::PlanResults<MeleeStudy>) -> Self {
        Self::of_runs(
            results.trials,
            results.seed,
            &results.counts,
            &results.exact,
        )
    }

    /// The same from every plan run's counts and exact results, in plan order.
    pub fn of_runs(
        trials: u64,
        seed: u64,
        counts: &[EngagementHistogram],
        exact: &[Option<(Option<EngagementOdds>, Option<PhaseOdds>)>],
    ) -> Self {
        let runs = counts
            .iter()
            .zip(exact)
            .map(|(histogram, exact)| {
                let (exact, phase) = exact.clone().unwrap_or((None, None));
                MeleeRunResult {
                    histogram: histogram.clone(),
                    exact,
                    phase,
                }
            })
            .collect();
        Self { trials, seed, runs }
    }
}

impl MeleeStudy {
    /// The plan's axes: the swept stats, then the two profiles of a round-robin game.
    pub fn key_axes(&self) -> Vec<&str> {
        let mut axes: Vec<&str> = self.axes.iter().map(|a| a.parameter.as_str()).collect();
        if self.is_round_robin() {
            axes.extend(["a_profile", "b_profile"]);
        }
        axes
    }

    /// A run's values on [`Self::key_axes`].
    pub fn key_coordinates(&self, run: &MeleeRun) -> Vec<AxisValue> {
        let mut values = run.coordinates.clone();
        if self.is_round_robin() {
            let (a, b) = run.pairing.expect("every round-robin run is a pairing");
            values.push(AxisValue::Text(self.round_robin[a].0.clone()));
            values.push(AxisValue::Text(self.round_robin[b].0.clone()));
        }
        values
    }
}

impl crate::engine::System for MeleeStudy {
    type Counts = EngagementHistogram;
    /// The whole engagement (where it fits the budget) and the exact first phase (where
    /// it fits the dice limit).
    type Exact = (Option<EngagementOdds>, Option<PhaseOdds>);

    fn derived(
        &self,
        counts: &[EngagementHistogram],
        exact: &[Option<Self::Exact>],
    ) -> Vec<crate::engine::derived::Derived> {
        derived::derived(self, &MeleeResults::of_runs(0, 0, counts, exact))
    }

    fn kind(&self) -> String {
        if self.is_round_robin() {
            "melee (round robin)"
        } else {
            "melee"
        }
        .to_string()
    }

    fn header(&self) -> crate::engine::Header<'_> {
        self.header.view()
    }

    fn plan(&self) -> crate::engine::Plan {
        crate::engine::Plan {
            axes: self.key_axes().iter().map(|a| a.to_string()).collect(),
            runs: self
                .runs
                .iter()
                .map(|r| crate::engine::RunKey {
                    variant: self.variants[r.variant].clone(),
                    coordinates: self.key_coordinates(r),
                })
                .collect(),
            unit: "engagements",
        }
    }

    fn empty(&self, run: usize) -> EngagementHistogram {
        self.runs[run].combat.empty_engagement_histogram()
    }

    fn simulate(
        &self,
        run: usize,
        dice: &mut crate::dice::DiceStream,
        n: u64,
        h: &mut EngagementHistogram,
    ) {
        self.runs[run].combat.engagement_block(dice, n, h);
    }

    fn exact(&self, run: usize) -> Option<Self::Exact> {
        let combat = &self.runs[run].combat;
        self.header.exact.then(|| {
            (
                combat.engagement_odds(),
                combat
                    .exact_phase_fits()
                    .then(|| combat.phase_odds(&combat.fresh_state())),
            )
        })
    }

    fn outcomes(
        &self,
        _run: usize,
        h: &EngagementHistogram,
        exact: Option<&Self::Exact>,
    ) -> Vec<crate::engine::Outcome> {
        let exact = exact.and_then(|(e, _)| e.as_ref()).map(Summary::exact);
        EngagementEnd::ALL
            .iter()
            .map(|&end| crate::engine::Outcome {
                name: end.name().to_string(),
                count: h.total(end),
                exact: exact.as_ref().map(|e| e.ends[end.index()]),
                fraction: None,
            })
            .collect()
    }

    fn distributions(
        &self,
        _run: usize,
        h: &EngagementHistogram,
        exact: Option<&Self::Exact>,
    ) -> Vec<crate::engine::Distribution> {
        use crate::engine::Distribution;
        let exact = exact.and_then(|(e, _)| e.as_ref()).map(Summary::exact);
        // Phases until the engagement ends (at least one), and models lost by each side.
        let phase_counts: Vec<u64> = h.ends.chunks(END_COUNT).map(|c| c.iter().sum()).collect();
        vec![
            Distribution {
                metric: "phases".into(),
                first: 1,
                counts: phase_counts,
                exact: exact
                    .as_ref()
                    .map(|e| e.by_phase.iter().map(|p| p.iter().sum()).collect()),
            },
            Distribution::new(
                "models_lost_a",
                &h.models_lost[0],
                exact.as_ref().map(|e| e.models_lost[0].as_slice()),
            ),
            Distribution::new(
                "models_lost_b",
                &h.models_lost[1],
                exact.as_ref().map(|e| e.models_lost[1].as_slice()),
            ),
        ]
    }

    /// Trials counted: every engagement ends in one phase with one end.
    fn trials_counted(&self, _run: usize, counts: &Self::Counts) -> u128 {
        crate::sim::total(&counts.ends)
    }

    fn rules(&self) -> serde_json::Value {
        json!(format!(
            "{:?}",
            self.runs
                .iter()
                .map(|r| (r.variant, r.pairing, r.combat.engagement()))
                .collect::<Vec<_>>()
        ))
    }
}

/// Engagement-level summary of one run, exact where enumerated, else simulated.
#[derive(Debug, Clone)]
pub struct Summary {
    pub ends: [f64; END_COUNT],
    /// `by_phase[p][e]`: ends in phase p + 1.
    pub by_phase: Vec<[f64; END_COUNT]>,
    pub models_lost: [Vec<f64>; 2],
}

impl Summary {
    pub fn exact(o: &EngagementOdds) -> Self {
        let mut ends = [0.0; END_COUNT];
        for phase in &o.ends {
            for (e, p) in phase.iter().enumerate() {
                ends[e] += p;
            }
        }
        Self {
            ends,
            by_phase: o.ends.clone(),
            models_lost: o.models_lost.clone(),
        }
    }

    pub fn simulated(h: &EngagementHistogram) -> Self {
        let n = h.trials() as f64;
        let by_phase: Vec<[f64; END_COUNT]> = h
            .ends
            .chunks(END_COUNT)
            .map(|c| std::array::from_fn(|e| c[e] as f64 / n))
            .collect();
        Self {
            ends: std::array::from_fn(|e| h.total(EngagementEnd::ALL[e]) as f64 / n),
            by_phase,
            models_lost: [0, 1].map(|s| h.models_lost[s].iter().map(|&c| c as f64 / n).collect()),
        }
    }

    pub fn p_wins(&self, side: usize) -> f64 {
        EngagementEnd::ALL
            .iter()
            .filter(|e| e.winner() == Some(side))
            .map(|e| self.ends[e.index()])
            .sum()
    }

    pub fn p_draw(&self) -> f64 {
        self.ends[EngagementEnd::BothOut.index()] + self.ends[EngagementEnd::RoundLimit.index()]
    }

    pub fn mean_phases(&self) -> f64 {
        self.by_phase
            .iter()
            .enumerate()
            .map(|(p, e)| (p + 1) as f64 * e.iter().sum::<f64>())
            .sum()
    }

    pub fn mean_lost(&self, side: usize) -> f64 {
        self.models_lost[side]
            .iter()
            .enumerate()
            .map(|(k, p)| k as f64 * p)
            .sum()
    }

    /// P(ended by phase p with one of `ends`), p = 1…limit.
    pub fn by(&self, ends: &[EngagementEnd]) -> Vec<f64> {
        let mut running = 0.0;
        self.by_phase
            .iter()
            .map(|e| {
                running += ends.iter().map(|end| e[end.index()]).sum::<f64>();
                running
            })
            .collect()
    }

    /// Score of side A: P(A wins) + ½ P(draw).
    pub fn score_a(&self) -> f64 {
        self.p_wins(0) + 0.5 * self.p_draw()
    }
}

pub fn round_robin_table(study: &MeleeStudy, results: &MeleeResults) -> RoundRobinTable {
    let n = study.round_robin.len();
    let mut score = vec![vec![0.0; n]; n];
    for (run, r) in study.runs.iter().zip(&results.runs) {
        if let Some((i, j)) = run.pairing {
            score[i][j] = best_summary(r).score_a();
        }
    }
    // i meets j twice: as A (score[i][j]) and as B (1 − score[j][i]).
    let mut wins = vec![vec![0.0; n]; n];
    let mut games = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..n {
            if i != j {
                wins[i][j] = score[i][j] + (1.0 - score[j][i]);
                games[i][j] = 2.0;
            }
        }
    }
    let strength = bradley_terry(&wins, &games, 1.0);
    RoundRobinTable { score, strength }
}

pub fn hints_of(study: &MeleeStudy, rr: &RoundRobinTable) -> Vec<Option<PointsHint>> {
    let points: Vec<Option<u32>> = study.round_robin.iter().map(|p| p.1).collect();
    let elos: Vec<f64> = rr.strength.iter().map(|&s| elo(s)).collect();
    points_hints(&points, &elos)
}

pub fn best_summary(r: &MeleeRunResult) -> Summary {
    r.exact
        .as_ref()
        .map_or_else(|| Summary::simulated(&r.histogram), Summary::exact)
}
