//! The analysis file: a designer's whole question in one TOML file.
//!
//! Why this module exists: it is the boundary where user input becomes validated plain
//! data. Everything is checked here, once: unknown keys are refused, every value is held
//! to its allowed range, every override is parsed and applied to the printed rules, every
//! variant is compiled, and every grid point of every sweep is prepared. An error names the
//! file, the line (where there is one), the field, the value and what is allowed. After
//! [`Analysis::load`] succeeds, running it cannot fail on input.
//!
//! ```toml
//! name = "field_combat"        # report folder name (default: the file's stem)
//! system = "field"             # field battles (RULES.md B1–B3)
//! seed = 1815
//! trials = 1_000_000           # per grid point and variant
//!
//! [battle]
//! terrain_drm = 0              # DRM in side A's favour (A is the attacker)
//!
//! [side.a]
//! name = "French"
//! sp = 12
//! morale = 2
//! leader = 2
//! tactic = { mix = { charge = 3, envelop = 1 } }
//!
//! [side.b]
//! sp = 8
//! morale = 2
//! tactic = "uniform"
//!
//! [sweep]
//! odds = ["1:1", "3:2", "2:1", "3:1"]   # sets A's SP from B's
//! drm = { from = -3, to = 3 }           # extra DRM in A's favour
//!
//! [rules]                      # overrides for every variant
//! round_limit = 6
//!
//! [[variant]]
//! name = "printed"
//!
//! [[variant]]
//! name = "cap 3"
//! rules = { drm_cap = 3 }
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::limits;
use crate::rules::crt::{
    self, ClcRow, FieldBattle, FieldCombat, FieldRules, Force, OddsColumn, OddsRounding,
    PreparedBattle, ResultPair, RulesError, TacticCell, TacticMix, CRT_COLUMNS, TACTIC_NAMES,
};

/// Trials per grid point when the file gives none.
pub const DEFAULT_TRIALS: u64 = 1_000_000;
/// Seed when the file gives none.
pub const DEFAULT_SEED: u64 = 1;
/// Most trials one grid point may ask for (the same bound as `--trials`).
pub use crate::limits::MAX_TRIALS;
/// Most grid points × variants one analysis may hold.
pub const MAX_RUNS: usize = 10_000;
/// Systems an analysis file can name.
pub const SYSTEMS: [&str; 13] = [
    "field",
    "attrition",
    "march",
    "naval",
    "blockade",
    "pursuit",
    "transport",
    "storm",
    "setup",
    "naval_engagement",
    "ratio",
    "melee",
    "frontier",
];

/// Why an analysis file was refused.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    #[error("cannot read analysis file {file}")]
    Read {
        file: String,
        source: std::io::Error,
    },
    #[error("{file}: {}", limits::tidy(message))]
    Syntax { file: String, message: String },
    #[error("{file}{}: field `{}`: {}", line.map(|l| format!(", line {l}")).unwrap_or_default(), limits::tidy(field), limits::tidy(message))]
    Invalid {
        file: String,
        line: Option<usize>,
        field: String,
        message: String,
    },
}

/// One value a sweep axis (or an extra axis of a plan) takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AxisValue {
    Int(i64),
    Odds {
        larger: u32,
        smaller: u32,
    },
    /// A name: a profile, a policy, a terrain.
    Text(String),
    /// The axis does not apply to this run (a null in the frames).
    Unset,
}

impl AxisValue {
    /// The value as a number, for charts' axes and sorting: odds as their ratio.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            AxisValue::Int(v) => Some(*v as f64),
            AxisValue::Odds { larger, smaller } => Some(f64::from(*larger) / f64::from(*smaller)),
            AxisValue::Text(_) | AxisValue::Unset => None,
        }
    }
}

impl fmt::Display for AxisValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AxisValue::Int(v) => write!(f, "{v}"),
            AxisValue::Odds { larger, smaller } => write!(f, "{larger}:{smaller}"),
            AxisValue::Text(t) => f.write_str(t),
            AxisValue::Unset => f.write_str("–"),
        }
    }
}

/// A swept parameter and its values, in file order.
#[derive(Clone, Debug)]
pub struct SweepAxis {
    pub parameter: String,
    pub values: Vec<AxisValue>,
}

/// Parameters a field analysis can sweep, in the order axes are laid out (the first is
/// the x of charts, the second the y of heatmaps).
pub const FIELD_PARAMETERS: [&str; 12] = [
    "odds",
    "drm",
    "a.sp",
    "b.sp",
    "a.morale",
    "b.morale",
    "a.leader",
    "b.leader",
    "a.drm",
    "b.drm",
    "terrain_drm",
    "round_limit",
];

/// A named set of overrides, compiled.
#[derive(Clone, Debug)]
pub struct Variant {
    pub name: String,
    pub rules: FieldRules,
}

/// One grid point of one variant, ready to run.
#[derive(Clone, Debug)]
pub struct Run {
    pub variant: usize,
    /// One value per axis.
    pub coordinates: Vec<AxisValue>,
    pub battle: FieldBattle,
    pub prepared: PreparedBattle,
    pub field: FieldCombat,
}

/// A validated analysis.
#[derive(Clone, Debug)]
pub struct Analysis {
    pub path: PathBuf,
    pub name: String,
    pub description: Option<String>,
    pub system: String,
    pub seed: u64,
    pub trials: u64,
    /// Compute exact battle distributions where the state space is small.
    pub exact: bool,
    pub base_battle: FieldBattle,
    pub variants: Vec<Variant>,
    pub axes: Vec<SweepAxis>,
    /// Variant-major, then grid points with the last axis varying fastest.
    pub runs: Vec<Run>,
}

#[derive(Deserialize)]
struct SystemOnly {
    system: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FieldFile {
    name: Option<Spanned<String>>,
    description: Option<String>,
    #[allow(dead_code)]
    system: Spanned<String>,
    seed: Option<Spanned<i64>>,
    trials: Option<Spanned<i64>>,
    exact: Option<bool>,
    #[serde(default)]
    battle: BattleSpec,
    side: SidesSpec,
    sweep: Option<BTreeMap<String, Spanned<toml::Value>>>,
    rules: Option<OverridesSpec>,
    variant: Option<Vec<VariantSpec>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct BattleSpec {
    terrain_drm: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SidesSpec {
    a: SideSpec,
    b: SideSpec,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SideSpec {
    name: Option<String>,
    sp: Spanned<i64>,
    morale: Spanned<i64>,
    leader: Option<Spanned<i64>>,
    drm: Option<Spanned<i64>>,
    tactic: Option<Spanned<toml::Value>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct OverridesSpec {
    drm_cap: Option<Spanned<i64>>,
    roll: Option<RollSpec>,
    odds_rounding: Option<Spanned<String>>,
    round_limit: Option<Spanned<i64>>,
    crt: Option<BTreeMap<String, Spanned<String>>>,
    odds: Option<BTreeMap<String, Spanned<i64>>>,
    clc: Option<BTreeMap<String, BTreeMap<String, Spanned<i64>>>>,
    tactics: Option<BTreeMap<String, BTreeMap<String, Spanned<toml::Value>>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RollSpec {
    min: Option<Spanned<i64>>,
    max: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VariantSpec {
    name: Spanned<String>,
    #[allow(dead_code)]
    description: Option<String>,
    rules: Option<OverridesSpec>,
}

/// Turns byte spans into line numbers and builds errors for one file.
pub(crate) struct Source<'a> {
    pub(crate) file: String,
    pub(crate) text: &'a str,
}

impl Source<'_> {
    /// The file's TOML as `T`; a syntax error, unknown key or wrong type names the file
    /// and the parser's line.
    pub(crate) fn parse_toml<T: serde::de::DeserializeOwned>(&self) -> Result<T, AnalysisError> {
        crate::toml_input::check_shape(&self.file, self.text)?;
        toml::from_str(self.text)
            .map_err(|e| crate::toml_input::describe_error(&self.file, self.text, &e))
    }

    pub(crate) fn line_of(&self, span: std::ops::Range<usize>) -> usize {
        self.text[..span.start.min(self.text.len())]
            .matches('\n')
            .count()
            + 1
    }

    pub(crate) fn error<T>(
        &self,
        spanned: &Spanned<T>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> AnalysisError {
        AnalysisError::Invalid {
            file: self.file.clone(),
            line: Some(self.line_of(spanned.span())),
            field: field.into(),
            message: message.into(),
        }
    }

    pub(crate) fn error_at(
        &self,
        line: Option<usize>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> AnalysisError {
        AnalysisError::Invalid {
            file: self.file.clone(),
            line,
            field: field.into(),
            message: message.into(),
        }
    }

    /// An integer held to `lo..=hi`.
    pub(crate) fn int_in(
        &self,
        value: &Spanned<i64>,
        field: &str,
        lo: i64,
        hi: i64,
        what: &str,
    ) -> Result<i64, AnalysisError> {
        let v = *value.get_ref();
        if (lo..=hi).contains(&v) {
            Ok(v)
        } else {
            Err(self.error(
                value,
                field,
                format!("{what} must be {lo} to {hi}, got {v}"),
            ))
        }
    }
}

impl Analysis {
    /// Reads and validates an analysis file.
    pub fn load(path: &Path) -> Result<Self, AnalysisError> {
        let text = crate::toml_input::read_analysis_file(path)?;
        Self::parse(path, &text)
    }

    /// Validates analysis text; `path` names it in errors and gives the default name.
    pub fn parse(path: &Path, text: &str) -> Result<Self, AnalysisError> {
        let source = Source {
            file: path.display().to_string(),
            text,
        };
        let syntax = |e: toml::de::Error| crate::toml_input::describe_error(&source.file, text, &e);
        crate::toml_input::check_shape(&source.file, text)?;
        let system: SystemOnly = toml::from_str(text).map_err(syntax)?;
        let Some(system) = system.system else {
            return Err(source.error_at(
                None,
                "system",
                format!(
                    "missing; say which rules system to run, one of: {}",
                    SYSTEMS.join(", ")
                ),
            ));
        };
        match system.get_ref().as_str() {
            "field" => {}
            other if SYSTEMS.contains(&other) => {
                return Err(source.error(
                    &system,
                    "system",
                    format!("\"{other}\" is a table study; load it with battlelab::study::load"),
                ))
            }
            other => {
                return Err(source.error(
                    &system,
                    "system",
                    format!(
                        "unknown system \"{other}\"; allowed: {}",
                        SYSTEMS.join(", ")
                    ),
                ))
            }
        }
        let spec: FieldFile = toml::from_str(text).map_err(syntax)?;
        Self::field(path, &source, spec)
    }

    fn field(path: &Path, source: &Source, spec: FieldFile) -> Result<Self, AnalysisError> {
        let (name, seed, trials) = header(
            source,
            path,
            spec.name.as_ref(),
            spec.seed.as_ref(),
            spec.trials.as_ref(),
        )?;
        let terrain_drm = match &spec.battle.terrain_drm {
            Some(v) => source.int_in(
                v,
                "battle.terrain_drm",
                crt::DRM_RANGE.0.into(),
                crt::DRM_RANGE.1.into(),
                "terrain DRM",
            )? as i32,
            None => 0,
        };
        let base_battle = FieldBattle {
            a: side(source, "a", &spec.side.a)?,
            b: side(source, "b", &spec.side.b)?,
            terrain_drm,
        };

        let mut base_rules = FieldRules::printed();
        if let Some(overrides) = &spec.rules {
            apply_overrides(source, "rules", overrides, &mut base_rules)?;
        }
        let mut variants = Vec::new();
        for (index, variant) in spec.variant.iter().flatten().enumerate() {
            let field = format!("variant[{index}]");
            let taken: Vec<&str> = variants.iter().map(|v: &Variant| v.name.as_str()).collect();
            let name = variant_name(source, &variant.name, &field, &taken)?;
            let mut rules = base_rules.clone();
            if let Some(overrides) = &variant.rules {
                apply_overrides(source, &format!("{field}.rules"), overrides, &mut rules)?;
            }
            let line = Some(source.line_of(variant.name.span()));
            FieldCombat::new(rules.clone())
                .map_err(|e| source.error_at(line, format!("{field}.{}", e.field), e.message))?;
            variants.push(Variant { name, rules });
        }
        if variants.is_empty() {
            FieldCombat::new(base_rules.clone())
                .map_err(|e| source.error_at(None, e.field, e.message))?;
            variants.push(Variant {
                name: "base".into(),
                rules: base_rules,
            });
        }

        let (axes, axis_lines) = sweep_axes(source, spec.sweep.as_ref(), &FIELD_PARAMETERS)?;
        check_grid_size(source, &axes, variants.len())?;
        let points = grid(&axes);
        let mut runs = Vec::with_capacity(points.len() * variants.len());
        for (variant_index, variant) in variants.iter().enumerate() {
            for coordinates in &points {
                let mut battle = base_battle.clone();
                let mut rules = variant.rules.clone();
                let mut extra_drm = 0;
                // Odds go last: they set A's SP from B's SP, which another axis may set.
                let mut ordered: Vec<(&SweepAxis, &AxisValue)> =
                    axes.iter().zip(coordinates).collect();
                ordered.sort_by_key(|(axis, _)| axis.parameter == "odds");
                for (axis, value) in ordered {
                    apply_coordinate(
                        &axis.parameter,
                        value,
                        &mut battle,
                        &mut rules,
                        &mut extra_drm,
                    );
                }
                battle.a.drm += extra_drm;
                let describe = || {
                    axes.iter()
                        .zip(coordinates)
                        .map(|(a, v)| format!("{} = {v}", a.parameter))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                let field = FieldCombat::new(rules).map_err(|e| {
                    // Only the round limit is a swept rule; point at its sweep line.
                    let swept = axes
                        .iter()
                        .position(|a| e.field == format!("rules.{}", a.parameter));
                    match swept {
                        Some(i) => source.error_at(
                            axis_lines[i],
                            format!("sweep.{}", axes[i].parameter),
                            format!("{} (at the grid point {})", e.message, describe()),
                        ),
                        None => source.error_at(
                            axis_lines.first().copied().flatten(),
                            format!("sweep ({})", describe()),
                            format!("{}: {}", e.field, e.message),
                        ),
                    }
                })?;
                let prepared = battle.prepare().map_err(|e| {
                    let line = axes
                        .iter()
                        .position(|a| {
                            e.field.ends_with(a.parameter.as_str())
                                || (a.parameter == "odds" && e.field == "side.a.sp")
                                || (a.parameter == "drm" && e.field == "side.a.drm")
                        })
                        .and_then(|i| axis_lines[i]);
                    source.error_at(
                        line,
                        e.field.clone(),
                        if axes.is_empty() {
                            e.message.clone()
                        } else {
                            format!("{} (at the grid point {})", e.message, describe())
                        },
                    )
                })?;
                runs.push(Run {
                    variant: variant_index,
                    coordinates: coordinates.clone(),
                    battle,
                    prepared,
                    field,
                });
            }
        }
        Ok(Self {
            path: path.to_path_buf(),
            name,
            description: spec.description,
            system: "field".into(),
            seed,
            trials,
            exact: spec.exact.unwrap_or(true),
            base_battle,
            variants,
            axes,
            runs,
        })
    }
}

fn side(source: &Source, key: &str, spec: &SideSpec) -> Result<Force, AnalysisError> {
    let field = |f: &str| format!("side.{key}.{f}");
    let sp = source.int_in(
        &spec.sp,
        &field("sp"),
        1,
        crt::MAX_SP.into(),
        "strength (SP)",
    )? as u32;
    let morale = source.int_in(
        &spec.morale,
        &field("morale"),
        1,
        crt::MAX_MORALE.into(),
        "morale (Guards 3, Major 2, Minor 1)",
    )? as u32;
    let leader = match &spec.leader {
        Some(v) => source.int_in(
            v,
            &field("leader"),
            crt::LEADER_RANGE.0.into(),
            crt::LEADER_RANGE.1.into(),
            "a leader rating",
        )? as i32,
        None => 0,
    };
    let drm = match &spec.drm {
        Some(v) => source.int_in(
            v,
            &field("drm"),
            crt::DRM_RANGE.0.into(),
            crt::DRM_RANGE.1.into(),
            "a side's DRM",
        )? as i32,
        None => 0,
    };
    let tactics = match &spec.tactic {
        Some(value) => tactic_policy(source, &field("tactic"), value)?,
        None => TacticMix::uniform(&[0, 1, 2, 3, 4, 5, 6]).expect("seven tactics"),
    };
    Ok(Force {
        name: spec
            .name
            .clone()
            .unwrap_or_else(|| key.to_ascii_uppercase()),
        sp,
        morale,
        leader,
        drm,
        tactics,
    })
}

fn unknown_tactic(name: &str) -> String {
    format!(
        "unknown tactic \"{name}\"; the tactical matrix has: {}",
        TACTIC_NAMES.join(", ")
    )
}

/// `"charge"`, `"uniform"`, `{ uniform = ["charge", "envelop"] }` or
/// `{ mix = { charge = 3, envelop = 1 } }`.
fn tactic_policy(
    source: &Source,
    field: &str,
    value: &Spanned<toml::Value>,
) -> Result<TacticMix, AnalysisError> {
    let fail = |message: String| source.error(value, field, message);
    let lookup = |name: &str| crt::tactic_index(name).ok_or_else(|| fail(unknown_tactic(name)));
    let usage = "write a tactic name (\"charge\"), \"uniform\", { uniform = [\"charge\", \"envelop\"] } or { mix = { charge = 3, envelop = 1 } }";
    match value.get_ref() {
        toml::Value::String(name) if name == "uniform" => {
            Ok(TacticMix::uniform(&[0, 1, 2, 3, 4, 5, 6]).expect("seven tactics"))
        }
        toml::Value::String(name) => Ok(TacticMix::fixed(lookup(name)?)),
        toml::Value::Table(table) if table.len() == 1 => {
            let (kind, inner) = table.iter().next().expect("one entry");
            match (kind.as_str(), inner) {
                ("uniform", toml::Value::Array(names)) => {
                    let mut tactics = Vec::new();
                    for name in names {
                        let name = name
                            .as_str()
                            .ok_or_else(|| fail(format!("uniform lists tactic names; {usage}")))?;
                        tactics.push(lookup(name)?);
                    }
                    TacticMix::uniform(&tactics).map_err(fail)
                }
                ("mix", toml::Value::Table(weights)) => {
                    let mut mix = [0u32; 7];
                    for (name, weight) in weights {
                        let tactic = lookup(name)?;
                        let weight = weight
                            .as_integer()
                            .filter(|w| (0..=i64::from(crt::MAX_MIX_WEIGHT)).contains(w))
                            .ok_or_else(|| {
                                fail(format!(
                                    "the weight of {name} must be a whole number 0 to {} (relative: charge = 3, envelop = 1 is 75%/25%), got {weight}",
                                    crt::MAX_MIX_WEIGHT
                                ))
                            })?;
                        mix[tactic] = weight as u32;
                    }
                    TacticMix::new(mix).map_err(fail)
                }
                _ => Err(fail(usage.to_string())),
            }
        }
        _ => Err(fail(usage.to_string())),
    }
}

fn apply_overrides(
    source: &Source,
    prefix: &str,
    spec: &OverridesSpec,
    rules: &mut FieldRules,
) -> Result<(), AnalysisError> {
    if let Some(cap) = &spec.drm_cap {
        rules.drm_cap =
            source.int_in(cap, &format!("{prefix}.drm_cap"), 0, 12, "the DRM cap")? as i32;
    }
    if let Some(roll) = &spec.roll {
        if let Some(min) = &roll.min {
            rules.roll_min = source.int_in(
                min,
                &format!("{prefix}.roll.min"),
                2,
                12,
                "the lowest modified roll",
            )? as i32;
        }
        if let Some(max) = &roll.max {
            rules.roll_max = source.int_in(
                max,
                &format!("{prefix}.roll.max"),
                2,
                12,
                "the highest modified roll",
            )? as i32;
        }
        if rules.roll_min > rules.roll_max {
            let at = roll
                .min
                .as_ref()
                .or(roll.max.as_ref())
                .expect("one of them was given");
            return Err(source.error(
                at,
                format!("{prefix}.roll"),
                format!(
                    "min ({}) must not exceed max ({})",
                    rules.roll_min, rules.roll_max
                ),
            ));
        }
    }
    if let Some(rounding) = &spec.odds_rounding {
        rules.odds_rounding = OddsRounding::parse(rounding.get_ref()).ok_or_else(|| {
            source.error(
                rounding,
                format!("{prefix}.odds_rounding"),
                format!(
                    "unknown rounding \"{}\"; allowed: {}",
                    rounding.get_ref(),
                    OddsRounding::NAMES.join(", ")
                ),
            )
        })?;
    }
    if let Some(limit) = &spec.round_limit {
        rules.round_limit = source.int_in(
            limit,
            &format!("{prefix}.round_limit"),
            crt::ROUND_LIMIT_RANGE.0.into(),
            crt::ROUND_LIMIT_RANGE.1.into(),
            "the round limit",
        )? as u32;
    }
    for (column, cell) in spec.crt.iter().flatten() {
        let field = format!("{prefix}.crt.\"{column}\"");
        let index: usize = column
            .trim()
            .parse()
            .ok()
            .filter(|c| (1..=CRT_COLUMNS).contains(c))
            .ok_or_else(|| {
                source.error(
                    cell,
                    &field,
                    format!("the CRT has result columns 1 to {CRT_COLUMNS}, not \"{column}\""),
                )
            })?;
        rules.crt.columns[index - 1] = ResultPair::parse(cell.get_ref()).ok_or_else(|| {
            source.error(
                cell,
                &field,
                format!(
                    "a CRT cell is L's result / S's result, each one of {}, e.g. \"1/D1\"; got \"{}\"",
                    crt::CrtResult::CODES.join(", "),
                    cell.get_ref()
                ),
            )
        })?;
    }
    for (odds, column) in spec.odds.iter().flatten() {
        let field = format!("{prefix}.odds.\"{odds}\"");
        let (larger, smaller) = OddsColumn::parse_ratio(odds)
            .filter(|(l, s)| l >= s)
            .ok_or_else(|| {
                source.error(
                    column,
                    &field,
                    format!("odds are written L:S with L ≥ S, e.g. \"3:2\"; got \"{odds}\""),
                )
            })?;
        let roll_two_column = source.int_in(
            column,
            &field,
            1,
            CRT_COLUMNS as i64,
            "the result column a modified roll of 2 reaches",
        )? as u32;
        match rules.odds_column_index(larger, smaller) {
            Some(i) => rules.odds_columns[i].roll_two_column = roll_two_column,
            None => {
                rules.odds_columns.push(OddsColumn {
                    larger,
                    smaller,
                    roll_two_column,
                });
                rules.odds_columns.sort_by(|a, b| {
                    (u64::from(a.larger) * u64::from(b.smaller))
                        .cmp(&(u64::from(b.larger) * u64::from(a.smaller)))
                });
            }
        }
    }
    for (row_name, bands) in spec.clc.iter().flatten() {
        let row = ClcRow::parse(row_name);
        let labels = rules.clc.band_labels();
        for (band_name, value) in bands {
            let field = format!("{prefix}.clc.\"{row_name}\".\"{band_name}\"");
            let row = row.ok_or_else(|| {
                source.error(
                    value,
                    &field,
                    format!(
                        "the CLC has rows {}; got \"{row_name}\"",
                        ClcRow::NAMES.join(", ")
                    ),
                )
            })?;
            let band = labels
                .iter()
                .position(|l| l == band_name.trim())
                .ok_or_else(|| {
                    source.error(
                        value,
                        &field,
                        format!(
                            "the CLC has SP bands {}; got \"{band_name}\"",
                            labels.join(", ")
                        ),
                    )
                })?;
            rules.clc.values[row as usize][band] = source.int_in(
                value,
                &field,
                crt::CLC_VALUE_RANGE.0.into(),
                crt::CLC_VALUE_RANGE.1.into(),
                "SP lost",
            )? as u32;
        }
    }
    for (row_name, columns) in spec.tactics.iter().flatten() {
        for (column_name, value) in columns {
            let field = format!("{prefix}.tactics.{row_name}.{column_name}");
            let l = crt::tactic_index(row_name)
                .ok_or_else(|| source.error(value, &field, unknown_tactic(row_name)))?;
            let s = crt::tactic_index(column_name)
                .ok_or_else(|| source.error(value, &field, unknown_tactic(column_name)))?;
            let text = match value.get_ref() {
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let cell = TacticCell::parse(&text).ok_or_else(|| {
                source.error(
                    value,
                    &field,
                    format!("a matrix cell is a DRM (\"+1\", \"-2\", \"0\"), \"NC\", or either in parentheses to end the battle (\"(-2)\", \"(NC)\"); got {text}"),
                )
            })?;
            if !(crt::DRM_RANGE.0..=crt::DRM_RANGE.1).contains(&cell.drm) {
                return Err(source.error(
                    value,
                    &field,
                    format!(
                        "a tactic DRM must be {} to +{}, got {}",
                        crt::DRM_RANGE.0,
                        crt::DRM_RANGE.1,
                        cell.drm
                    ),
                ));
            }
            rules.tactics.cells[l][s] = cell;
        }
    }
    Ok(())
}

/// Reads `[sweep]` into axes in the order of `parameters`, with each axis's line.
pub(crate) fn sweep_axes(
    source: &Source,
    sweep: Option<&BTreeMap<String, Spanned<toml::Value>>>,
    parameters: &[&str],
) -> Result<(Vec<SweepAxis>, Vec<Option<usize>>), AnalysisError> {
    let Some(sweep) = sweep else {
        return Ok((Vec::new(), Vec::new()));
    };
    // Flatten dotted keys: `a.sp = [..]` arrives as `a = { sp = [..] }`.
    let mut entries: Vec<(String, toml::Value, &Spanned<toml::Value>)> = Vec::new();
    for (key, value) in sweep {
        match value.get_ref() {
            toml::Value::Table(table) if !is_range(table) => {
                for (inner, v) in table {
                    entries.push((format!("{key}.{inner}"), v.clone(), value));
                }
            }
            v => entries.push((key.clone(), v.clone(), value)),
        }
    }
    if entries.is_empty() {
        return Err(source.error_at(
            None,
            "sweep",
            format!(
                "an empty [sweep]; give at least one of {} or remove [sweep]",
                parameters.join(", ")
            ),
        ));
    }
    let mut axes = Vec::new();
    for (parameter, value, spanned) in entries {
        let field = format!("sweep.{parameter}");
        if !parameters.contains(&parameter.as_str()) {
            return Err(source.error(
                spanned,
                &field,
                format!(
                    "cannot sweep \"{parameter}\"; sweepable parameters: {}",
                    parameters.join(", ")
                ),
            ));
        }
        let values =
            axis_values(&parameter, &value).map_err(|m| source.error(spanned, &field, m))?;
        if values.is_empty() {
            return Err(source.error(spanned, &field, "an empty sweep; give at least one value"));
        }
        for (i, v) in values.iter().enumerate() {
            if values[..i].contains(v) {
                return Err(source.error(spanned, &field, format!("the value {v} appears twice")));
            }
        }
        axes.push((parameter, values, Some(source.line_of(spanned.span()))));
    }
    if axes.iter().any(|a| a.0 == "odds") && axes.iter().any(|a| a.0 == "a.sp") {
        return Err(source.error_at(
            None,
            "sweep.odds",
            "odds sets side A's SP from side B's; sweep either odds or a.sp, not both",
        ));
    }
    axes.sort_by_key(|a| parameters.iter().position(|p| *p == a.0));
    let lines = axes.iter().map(|a| a.2).collect();
    Ok((
        axes.into_iter()
            .map(|(parameter, values, _)| SweepAxis { parameter, values })
            .collect(),
        lines,
    ))
}

fn is_range(table: &toml::Table) -> bool {
    table.contains_key("from") || table.contains_key("to")
}

fn axis_values(parameter: &str, value: &toml::Value) -> Result<Vec<AxisValue>, String> {
    if parameter == "odds" {
        let list = value.as_array().ok_or(
            "odds are swept as a list of ratios, e.g. [\"1:1\", \"3:2\", \"2:1\", \"3:1\"]",
        )?;
        return list
            .iter()
            .map(|v| {
                let text = v
                    .as_str()
                    .ok_or("odds are written as strings, e.g. \"3:2\"")?;
                OddsColumn::parse_ratio(text)
                    .filter(|(l, s)| l >= s)
                    .map(|(larger, smaller)| AxisValue::Odds { larger, smaller })
                    .ok_or(format!(
                        "odds are written L:S with L ≥ S, e.g. \"3:2\"; got \"{text}\""
                    ))
            })
            .collect();
    }
    match value {
        toml::Value::Array(list) => list
            .iter()
            .map(|v| {
                v.as_integer()
                    .map(AxisValue::Int)
                    .ok_or(format!("{parameter} takes whole numbers, got {v}"))
            })
            .collect(),
        toml::Value::Table(range) => {
            let get = |key: &str| {
                range.get(key).map(|v| {
                    v.as_integer()
                        .ok_or(format!("{key} must be a whole number"))
                })
            };
            for key in range.keys() {
                if !["from", "to", "step"].contains(&key.as_str()) {
                    return Err(format!(
                        "a range has from, to and step; unknown key \"{key}\""
                    ));
                }
            }
            let from = get("from").ok_or("a range needs from")??;
            let to = get("to").ok_or("a range needs to")??;
            let step = get("step").unwrap_or(Ok(1))?;
            if step <= 0 {
                return Err(format!("step must be positive, got {step}"));
            }
            if from > to {
                return Err(format!("an empty range: from ({from}) is above to ({to})"));
            }
            // In i128: `to - from` of two i64 values cannot overflow there.
            let count = (i128::from(to) - i128::from(from)) / i128::from(step);
            if count > 1000 {
                return Err("a range may hold at most 1001 values".into());
            }
            Ok((0..=count as i64)
                .map(|k| AxisValue::Int(from + k * step))
                .collect())
        }
        other => Err(format!(
            "sweep a list ([1, 2, 3]) or a range ({{ from = -3, to = 3 }}), got {other}"
        )),
    }
}

/// The report name, seed and trials of any analysis file, checked: the name defaults to
/// the file's stem (see [`default_report_name`]), the seed to [`DEFAULT_SEED`], trials to
/// [`DEFAULT_TRIALS`].
pub(crate) fn header(
    source: &Source,
    path: &Path,
    name: Option<&Spanned<String>>,
    seed: Option<&Spanned<i64>>,
    trials: Option<&Spanned<i64>>,
) -> Result<(String, u64, u64), AnalysisError> {
    let name = match name {
        Some(name) => {
            let text = name.get_ref();
            let valid = !text.is_empty()
                && text
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if !valid {
                return Err(source.error(
                    name,
                    "name",
                    format!(
                        "the report folder name may use letters, digits, '_' and '-' only, got \"{}\"",
                        limits::echo(text)
                    ),
                ));
            }
            if text.chars().count() > limits::MAX_NAME_CHARS {
                return Err(source.error(
                    name,
                    "name",
                    format!(
                        "the report folder name is {} characters long; at most {} are allowed",
                        text.chars().count(),
                        limits::MAX_NAME_CHARS
                    ),
                ));
            }
            text.clone()
        }
        None => default_report_name(path).ok_or_else(|| {
            source.error_at(
                None,
                "name",
                format!(
                    "the file name does not give a report folder name (it needs a letter or digit); add name = \"…\" (letters, digits, '_' and '-', at most {} characters)",
                    limits::MAX_NAME_CHARS
                ),
            )
        })?,
    };
    let seed = match seed {
        Some(seed) => source.int_in(seed, "seed", 0, i64::MAX, "the seed")? as u64,
        None => DEFAULT_SEED,
    };
    let trials = match trials {
        Some(trials) => source.int_in(
            trials,
            "trials",
            1,
            MAX_TRIALS as i64,
            "trials per grid point",
        )? as u64,
        None => DEFAULT_TRIALS,
    };
    Ok((name, seed, trials))
}

/// The report folder name a file gets when it names none: its stem, with every character
/// other than ASCII letters, digits, `_` and `-` made `_`, runs of `_` made one and the
/// ends trimmed, at most [`limits::MAX_NAME_CHARS`] long. `None` if nothing is left
/// (`...toml` must not become the folder `..`).
fn default_report_name(path: &Path) -> Option<String> {
    let stem = path.file_stem()?.to_string_lossy();
    let mut name = String::new();
    for c in stem.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '-' {
            c
        } else {
            '_'
        };
        if !(c == '_' && (name.is_empty() || name.ends_with('_'))) {
            name.push(c);
        }
    }
    let name: String = name
        .trim_end_matches('_')
        .chars()
        .take(limits::MAX_NAME_CHARS)
        .collect();
    name.chars()
        .any(|c| c.is_ascii_alphanumeric())
        .then_some(name)
}

/// A variant's name, checked: not empty, at most [`limits::MAX_NAME_CHARS`] characters,
/// and different from every earlier name in `taken` also as a file name: chart files are
/// named after [`crate::report::slug`], so "printed", "Printed" and "printed!" would
/// overwrite each other's charts.
pub(crate) fn variant_name(
    source: &Source,
    name: &Spanned<String>,
    field: &str,
    taken: &[&str],
) -> Result<String, AnalysisError> {
    let text = name.get_ref().trim();
    let refuse = |message: String| Err(source.error(name, format!("{field}.name"), message));
    if text.is_empty() {
        return refuse("each variant needs a non-empty name of its own".into());
    }
    let count = text.chars().count();
    if count > limits::MAX_NAME_CHARS {
        return refuse(format!(
            "a variant name is at most {} characters, got {count}",
            limits::MAX_NAME_CHARS
        ));
    }
    if text.chars().any(char::is_control) {
        return refuse("a variant name may not hold control characters (tabs, newlines)".into());
    }
    let slug = crate::report::slug(text);
    if slug.is_empty() {
        return refuse(format!(
            "a variant name needs a letter or digit (it names chart files), got \"{}\"",
            limits::echo(text)
        ));
    }
    if let Some(other) = taken.iter().find(|t| crate::report::slug(t) == slug) {
        return refuse(if *other == text {
            format!(
                "each variant needs a non-empty name of its own; \"{}\" is used twice",
                limits::echo(text)
            )
        } else {
            format!(
                "\"{}\" and \"{}\" would name the same chart files (…_{slug}.png); give variants names that differ in their letters or digits",
                limits::echo(other),
                limits::echo(text)
            )
        });
    }
    Ok(text.to_string())
}

/// Refuses a grid of more than [`MAX_RUNS`] runs (grid points × variants).
pub(crate) fn check_grid_size(
    source: &Source,
    axes: &[SweepAxis],
    variants: usize,
) -> Result<(), AnalysisError> {
    let points = axes
        .iter()
        .fold(1usize, |n, a| n.saturating_mul(a.values.len()));
    if points.saturating_mul(variants) > MAX_RUNS {
        return Err(source.error_at(
            None,
            "sweep",
            format!("{points} grid points × {variants} variants is more than {MAX_RUNS} runs; sweep fewer values"),
        ));
    }
    Ok(())
}

/// Every combination of axis values, the last axis varying fastest.
pub(crate) fn grid(axes: &[SweepAxis]) -> Vec<Vec<AxisValue>> {
    axes.iter().fold(vec![Vec::new()], |points, axis| {
        points
            .into_iter()
            .flat_map(|point| {
                axis.values.iter().map(move |v| {
                    let mut p = point.clone();
                    p.push(v.clone());
                    p
                })
            })
            .collect()
    })
}

/// Sets one swept parameter. Values are range-checked afterwards by
/// [`FieldBattle::prepare`] and [`FieldCombat::new`]; out-of-range integers saturate so
/// that the check sees them.
fn apply_coordinate(
    parameter: &str,
    value: &AxisValue,
    battle: &mut FieldBattle,
    rules: &mut FieldRules,
    extra_drm: &mut i32,
) {
    let int = match value {
        AxisValue::Int(v) => *v,
        AxisValue::Odds { larger, smaller } => {
            // A's SP = ⌈B's SP × L / S⌉: the smallest force reaching these odds.
            let sp = (u64::from(battle.b.sp) * u64::from(*larger)).div_ceil(u64::from(*smaller));
            battle.a.sp = sp.min(u64::from(u32::MAX)) as u32;
            return;
        }
        AxisValue::Text(_) | AxisValue::Unset => {
            unreachable!("field sweeps hold numbers and odds only")
        }
    };
    let as_u32 = int.clamp(0, i64::from(u32::MAX)) as u32;
    let as_i32 = int.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
    match parameter {
        "drm" => *extra_drm = as_i32,
        "a.sp" => battle.a.sp = as_u32,
        "b.sp" => battle.b.sp = as_u32,
        "a.morale" => battle.a.morale = as_u32,
        "b.morale" => battle.b.morale = as_u32,
        "a.leader" => battle.a.leader = as_i32,
        "b.leader" => battle.b.leader = as_i32,
        "a.drm" => battle.a.drm = as_i32,
        "b.drm" => battle.b.drm = as_i32,
        "terrain_drm" => battle.terrain_drm = as_i32,
        "round_limit" => rules.round_limit = as_u32,
        _ => unreachable!("parameters are checked against FIELD_PARAMETERS"),
    }
}

/// Wraps a rules error from code paths outside a file (the `table` command).
pub fn rules_error_message(error: &RulesError) -> String {
    format!("{}: {}", error.field, error.message)
}
