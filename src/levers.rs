//! The settings a designer turns: which integer settings of an analysis file `value` can
//! price and `solve` can vary, where each lives in the file, and what each system reads
//! first (its headlines) and counts in (its currency).
//!
//! Why this module exists: "what is a +1 worth?" and "which value hits my target?" are
//! asked of every system the same way — change one setting, run the same plan with the
//! same dice, and read the headline — so the change is made once, here, on the analysis
//! file itself (a TOML document), and the changed file goes through the system's own
//! parser. Nothing is priced that the parser would not accept, every range check is the
//! parser's, and a changed file is an ordinary analysis: exact where the original is
//! exact, drawing the same dice block by block (common random numbers).
//!
//! A lever is changed where it is set: in `[sweep]` when it is swept (each value moved),
//! else at its key (and in every `[[variant]]` that overrides it), else — for settings
//! that exist only as sweeps, like field battles' extra `drm` — as a one-value sweep.
//!
//! A side's lever changes that side only. Where both sides of a melee name one profile,
//! the side gets its own copy of the profile (under a fresh name) before its stat moves;
//! a ratio side's listed units that set their own modifier move with the side.
//!
//! Some settings are set by the plan itself in some runs: an odds sweep sets A's SP, a
//! ratio `size` sweep both sides' units, a frontier sensitivity run a side's level or
//! leader, the attrition turns study its own SP and DRM. There a lever would change
//! nothing; [`overridden`] names, run by run, what sets it, so `value` and `solve` refuse
//! (or leave out) those runs instead of answering "0".
//!
//! Odds are not moved in the file: `odds±N` and the odds-column equivalent are read along
//! the odds columns of the rules as run ([`odds_columns`]: the printed ones and any the
//! file adds), run by run, by `value` itself.

use battlelab_core::engine::headline::{Headline, Match};

/// Where a lever lives in an analysis file.
#[derive(Clone, Copy, Debug)]
pub enum Place {
    /// A key (`side.a.drm`), with the value it has when the file leaves it out (`None`:
    /// the file must give it), and the same key under a `[[variant]]` that overrides it.
    Key {
        path: &'static [&'static str],
        default: Option<i64>,
        variant_path: &'static [&'static str],
    },
    /// Only ever a sweep (field battles' extra `drm`); the value is `default` when the
    /// file does not sweep it.
    SweepOnly { default: i64 },
    /// A step along the odds columns (`odds+1`: 1:1 → 3:2); only where odds are swept.
    Odds,
    /// A stat of the profiles a melee side fields (`side` "a" or "b").
    MeleeStat {
        side: &'static str,
        stat: &'static str,
    },
}

/// Runs of a plan where something else sets a lever: those whose axis `axis` has a value
/// (one that starts with `prefix`). A `[sweep]` is such an axis with every run on it.
#[derive(Clone, Copy, Debug)]
pub struct SetBy {
    pub axis: &'static str,
    pub prefix: &'static str,
    /// What sets the lever there, e.g. "[sweep] odds, which sets A's SP to ⌈B's SP × L/S⌉".
    pub what: &'static str,
    /// What to use instead.
    pub instead: &'static str,
}

/// One setting `value` prices and `solve` varies.
#[derive(Clone, Copy, Debug)]
pub struct Lever {
    /// Its name on the command line and in `[value]`: the sweep parameter's name.
    pub name: &'static str,
    pub meaning: &'static str,
    pub place: Place,
    /// The `[sweep]` parameter that sets it, where it can be swept.
    pub sweep: Option<&'static str>,
    /// The values `solve` tries when not told (`--from`, `--to`).
    pub search: (i64, i64),
    /// Where the plan itself sets this lever (see [`overridden`]).
    pub set_by: &'static [SetBy],
    /// For a side-wide modifier that listed units may set for themselves: the list (`side.a.units`)
    /// and the key in each unit (`argument`). Such units move with the side.
    pub per_unit: Option<(&'static [&'static str], &'static str)>,
}

/// What a system offers `value` and `solve`.
pub struct SystemLevers {
    pub systems: &'static [&'static str],
    pub levers: &'static [Lever],
    /// The headlines, the first the default.
    pub headlines: fn() -> Vec<Headline>,
    /// The modifiers priced when the file does not say.
    pub default_modifiers: &'static [&'static str],
    /// The lever equivalents are counted in, and the unit's name.
    pub currency: Option<(&'static str, &'static str)>,
}

const fn key(
    name: &'static str,
    meaning: &'static str,
    path: &'static [&'static str],
    default: Option<i64>,
    search: (i64, i64),
) -> Lever {
    Lever {
        name,
        meaning,
        place: Place::Key {
            path,
            default,
            variant_path: &[],
        },
        sweep: Some(name),
        search,
        set_by: &[],
        per_unit: None,
    }
}

impl Lever {
    /// Also overridden by a `[[variant]]` at `at` (within the variant's table).
    const fn overridden_at(self, at: &'static [&'static str]) -> Self {
        match self.place {
            Place::Key { path, default, .. } => Lever {
                place: Place::Key {
                    path,
                    default,
                    variant_path: at,
                },
                ..self
            },
            _ => self,
        }
    }

    /// Not a `[sweep]` parameter: moved only at its key.
    const fn unswept(self) -> Self {
        Lever {
            sweep: None,
            ..self
        }
    }

    /// Set by the plan itself in the runs `set_by` describes.
    const fn set_by(self, set_by: &'static [SetBy]) -> Self {
        Lever { set_by, ..self }
    }

    /// Also set by each unit listed at `list` that gives its own `key`.
    const fn per_unit(self, list: &'static [&'static str], key: &'static str) -> Self {
        Lever {
            per_unit: Some((list, key)),
            ..self
        }
    }
}

const ODDS_SET_A_SP: &[SetBy] = &[SetBy {
    axis: "odds",
    prefix: "",
    what: "[sweep] odds, which sets A's SP to ⌈B's SP × L/S⌉",
    instead: "price odds±N (a step along the table's odds columns) or b.sp, or drop the odds sweep",
}];

const ODDS_SET_A_NSP: &[SetBy] = &[SetBy {
    axis: "odds",
    prefix: "",
    what: "[sweep] odds, which sets A's NSP to ⌈B's NSP × L/S⌉",
    instead:
        "price odds±N (a step along the table's odds columns) or b.nsp, or drop the odds sweep",
}];

const SIZE_SETS_UNITS: &[SetBy] = &[SetBy {
    axis: "size",
    prefix: "",
    what: "[sweep] size, which sets both sides' unit counts",
    instead: "sweep a.units and b.units in place of size",
}];

const TURNS_SET_DRM: &[SetBy] = &[SetBy {
    axis: "turns",
    prefix: "",
    what: "[turns], whose runs roll under turns.drm",
    instead: "read the single-roll runs (turns unset), or move turns.drm in the file",
}];

const TURNS_SET_SP: &[SetBy] = &[SetBy {
    axis: "turns",
    prefix: "",
    what: "[turns], whose runs start from turns.sp",
    instead: "read the single-roll runs (turns unset), or move turns.sp in the file",
}];

const LEVELS_SET_A_LEVEL: &[SetBy] = &[SetBy {
    axis: "sensitivity",
    prefix: "levels",
    what: "sensitivity.levels, whose runs set side A's level 1-5",
    instead: "read a run where it is in force, e.g. sensitivity=\"as written\"",
}];

const LEADERS_SET_A_LEADER: &[SetBy] = &[SetBy {
    axis: "setting",
    prefix: "A primary leader",
    what: "sensitivity.leaders, whose runs set side A's primary leader 1-3",
    instead: "read a run where it is in force, e.g. sensitivity=\"as written\"",
}];

const LEADERS_SET_B_LEADER: &[SetBy] = &[SetBy {
    axis: "setting",
    prefix: "B primary leader",
    what: "sensitivity.leaders, whose runs set side B's primary leader 1-3",
    instead: "read a run where it is in force, e.g. sensitivity=\"as written\"",
}];

const FIELD_LEVERS: &[Lever] = &[
    Lever {
        name: "odds",
        meaning: "one odds column along the table's columns (1:1 → 3:2 → 2:1 → 3:1, and any the file adds)",
        place: Place::Odds,
        sweep: Some("odds"),
        search: (0, 0),
        set_by: &[],
        per_unit: None,
    },
    Lever {
        name: "drm",
        meaning: "the extra DRM in side A's favour (a sweep; 0 when not swept)",
        place: Place::SweepOnly { default: 0 },
        sweep: Some("drm"),
        search: (-6, 6),
        set_by: &[],
        per_unit: None,
    },
    key(
        "a.drm",
        "side A's own DRM",
        &["side", "a", "drm"],
        Some(0),
        (-6, 6),
    ),
    key(
        "b.drm",
        "side B's own DRM",
        &["side", "b", "drm"],
        Some(0),
        (-6, 6),
    ),
    key(
        "a.leader",
        "side A's leader rating",
        &["side", "a", "leader"],
        Some(0),
        (0, 3),
    ),
    key(
        "b.leader",
        "side B's leader rating",
        &["side", "b", "leader"],
        Some(0),
        (0, 3),
    ),
    key(
        "a.morale",
        "side A's morale",
        &["side", "a", "morale"],
        None,
        (1, 9),
    ),
    key(
        "b.morale",
        "side B's morale",
        &["side", "b", "morale"],
        None,
        (1, 9),
    ),
    key(
        "a.sp",
        "side A's strength points",
        &["side", "a", "sp"],
        None,
        (1, 40),
    )
    .set_by(ODDS_SET_A_SP),
    key(
        "b.sp",
        "side B's strength points",
        &["side", "b", "sp"],
        None,
        (1, 40),
    ),
    key(
        "terrain_drm",
        "the terrain DRM in side A's favour",
        &["battle", "terrain_drm"],
        Some(0),
        (-6, 6),
    ),
    key(
        "round_limit",
        "the round limit",
        &["rules", "round_limit"],
        Some(6),
        (1, 12),
    )
    .overridden_at(&["rules", "round_limit"]),
    cap(
        "cap.leader",
        "the cap on the leader DRM",
        &["rules", "caps", "leader"],
    ),
    cap(
        "cap.morale",
        "the cap on the morale DRM",
        &["rules", "caps", "morale"],
    ),
    cap(
        "cap.terrain",
        "the cap on the terrain DRM",
        &["rules", "caps", "terrain"],
    ),
    cap(
        "cap.tactic",
        "the cap on the tactical-matrix DRM",
        &["rules", "caps", "tactic"],
    ),
    cap(
        "cap.drm",
        "the cap on the sides' own DRMs",
        &["rules", "caps", "drm"],
    ),
];

/// A per-source DRM cap (`[rules] caps`): moved where the file sets it.
const fn cap(name: &'static str, meaning: &'static str, path: &'static [&'static str]) -> Lever {
    key(name, meaning, path, None, (0, 6))
        .overridden_at(path)
        .unswept()
}

const NAVAL_LEVERS: &[Lever] = &[
    Lever {
        name: "odds",
        meaning: "one odds column along the naval table's columns (1-1 → 3-2 → 2-1)",
        place: Place::Odds,
        sweep: Some("odds"),
        search: (0, 0),
        set_by: &[],
        per_unit: None,
    },
    Lever {
        name: "drm",
        meaning: "the extra DRM in side A's favour (a sweep; 0 when not swept)",
        place: Place::SweepOnly { default: 0 },
        sweep: Some("drm"),
        search: (-6, 6),
        set_by: &[],
        per_unit: None,
    },
    key(
        "a.leader",
        "fleet A's leader rating",
        &["fleet", "a", "leader"],
        Some(0),
        (0, 3),
    ),
    key(
        "b.leader",
        "fleet B's leader rating",
        &["fleet", "b", "leader"],
        Some(0),
        (0, 3),
    ),
    key(
        "a.morale",
        "fleet A's morale",
        &["fleet", "a", "morale"],
        None,
        (1, 3),
    ),
    key(
        "b.morale",
        "fleet B's morale",
        &["fleet", "b", "morale"],
        None,
        (1, 3),
    ),
    key(
        "a.nsp",
        "fleet A's naval strength points",
        &["fleet", "a", "nsp"],
        None,
        (1, 30),
    )
    .set_by(ODDS_SET_A_NSP),
    key(
        "b.nsp",
        "fleet B's naval strength points",
        &["fleet", "b", "nsp"],
        None,
        (1, 30),
    ),
];

const RATIO_LEVERS: &[Lever] = &[
    key(
        "a.argument",
        "side A's argument modifier",
        &["side", "a", "argument"],
        Some(0),
        (-3, 3),
    )
    .overridden_at(&["a", "argument"])
    .per_unit(&["side", "a", "units"], "argument"),
    key(
        "b.argument",
        "side B's argument modifier",
        &["side", "b", "argument"],
        Some(0),
        (-3, 3),
    )
    .overridden_at(&["b", "argument"])
    .per_unit(&["side", "b", "units"], "argument"),
    key(
        "a.quality",
        "side A's quality modifier",
        &["side", "a", "quality"],
        Some(0),
        (-3, 3),
    )
    .overridden_at(&["a", "quality"])
    .per_unit(&["side", "a", "units"], "quality"),
    key(
        "b.quality",
        "side B's quality modifier",
        &["side", "b", "quality"],
        Some(0),
        (-3, 3),
    )
    .overridden_at(&["b", "quality"])
    .per_unit(&["side", "b", "units"], "quality"),
    key(
        "a.units",
        "side A's units (an extra unit in the line)",
        &["side", "a", "units"],
        None,
        (1, 12),
    )
    .set_by(SIZE_SETS_UNITS),
    key(
        "b.units",
        "side B's units (an extra unit in the line)",
        &["side", "b", "units"],
        None,
        (1, 12),
    )
    .set_by(SIZE_SETS_UNITS),
    key(
        "a.reserves",
        "side A's units in reserve",
        &["side", "a", "reserves"],
        Some(0),
        (0, 6),
    )
    .overridden_at(&["a", "reserves"]),
    key(
        "b.reserves",
        "side B's units in reserve",
        &["side", "b", "reserves"],
        Some(0),
        (0, 6),
    )
    .overridden_at(&["b", "reserves"]),
];

macro_rules! melee_stats {
    ($($name:literal, $side:literal, $stat:literal, $meaning:literal, $lo:literal, $hi:literal);* $(;)?) => {
        &[$(Lever {
            name: $name,
            meaning: $meaning,
            place: Place::MeleeStat { side: $side, stat: $stat },
            sweep: Some($name),
            search: ($lo, $hi),
            set_by: &[],
            per_unit: None,
        }),*]
    };
}

const MELEE_LEVERS: &[Lever] = melee_stats![
    "a.models", "a", "models", "side A's models", 1, 40;
    "a.attacks", "a", "attacks", "side A's attacks per model", 1, 6;
    "a.skill", "a", "skill", "side A's skill", 1, 10;
    "a.power", "a", "power", "side A's power", 1, 10;
    "a.defense", "a", "defense", "side A's defense", 1, 10;
    "a.discipline", "a", "discipline", "side A's discipline", 2, 12;
    "b.models", "b", "models", "side B's models", 1, 40;
    "b.attacks", "b", "attacks", "side B's attacks per model", 1, 6;
    "b.skill", "b", "skill", "side B's skill", 1, 10;
    "b.power", "b", "power", "side B's power", 1, 10;
    "b.defense", "b", "defense", "side B's defense", 1, 10;
    "b.discipline", "b", "discipline", "side B's discipline", 2, 12;
];

const FRONTIER_LEVERS: &[Lever] = &[
    key(
        "a.leader",
        "side A's primary leader rating",
        &["side", "a", "primary_leader"],
        None,
        (0, 4),
    )
    .unswept()
    .set_by(LEADERS_SET_A_LEADER),
    key(
        "b.leader",
        "side B's primary leader rating",
        &["side", "b", "primary_leader"],
        None,
        (0, 4),
    )
    .unswept()
    .set_by(LEADERS_SET_B_LEADER),
    key(
        "a.level",
        "side A's commitment level",
        &["side", "a", "level"],
        None,
        (1, 5),
    )
    .unswept()
    .set_by(LEVELS_SET_A_LEVEL),
    key(
        "b.level",
        "side B's commitment level",
        &["side", "b", "level"],
        None,
        (1, 5),
    )
    .unswept(),
];

const TABLE_DRM: Lever = key(
    "drm",
    "the DRM on the roll",
    &["roll", "drm"],
    Some(0),
    (-6, 6),
)
.set_by(TURNS_SET_DRM);

/// The d6 tables: every one takes a DRM; attrition also the SP in the hex, forced march
/// the extra MP asked for.
const TABLE_LEVERS: &[Lever] = &[TABLE_DRM];
const ATTRITION_LEVERS: &[Lever] = &[
    TABLE_DRM,
    key("sp", "the SP in the hex", &["roll", "sp"], None, (1, 30)).set_by(TURNS_SET_SP),
];
const MARCH_LEVERS: &[Lever] = &[
    TABLE_DRM,
    key(
        "extra",
        "the extra MP asked for",
        &["roll", "extra"],
        None,
        (1, 3),
    ),
];

fn field_headlines() -> Vec<Headline> {
    vec![
        Headline::outcomes("a_wins", "P(A wins)", Match::Is(vec!["A wins".into()])),
        Headline::metric("sp_lost_b"),
        Headline::metric("sp_lost_a"),
    ]
}

fn naval_headlines() -> Vec<Headline> {
    vec![
        Headline::outcomes(
            "b_destroyed",
            "P(B destroyed)",
            Match::Is(vec!["B destroyed".into()]),
        ),
        Headline::metric("nsp_lost_b"),
        Headline::metric("nsp_lost_a"),
    ]
}

fn ratio_headlines() -> Vec<Headline> {
    vec![
        Headline::outcomes("a_wins", "P(A wins)", Match::Contains("A wins".into())),
        Headline::metric("cp_a"),
        Headline::metric("cp_b"),
    ]
}

fn melee_headlines() -> Vec<Headline> {
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

fn frontier_headlines() -> Vec<Headline> {
    vec![
        Headline::outcomes(
            "a_victory",
            "P(A victory)",
            Match::Is(vec!["A victory".into()]),
        ),
        Headline::metric("eliminated_b"),
        Headline::metric("eliminated_a"),
    ]
}

fn attrition_headlines() -> Vec<Headline> {
    vec![Headline::outcomes(
        "no_loss",
        "P(no SP lost)",
        Match::Is(vec!["0".into()]),
    )]
}

fn no_headlines() -> Vec<Headline> {
    Vec::new()
}

/// Every system `value` and `solve` serve, by the names files give them.
pub const CATALOG: &[SystemLevers] = &[
    SystemLevers {
        systems: &["field"],
        levers: FIELD_LEVERS,
        headlines: field_headlines,
        default_modifiers: &["drm+1", "a.leader+1", "a.morale+1", "odds+1"],
        currency: Some(("odds", "odds columns")),
    },
    SystemLevers {
        systems: &["naval_engagement"],
        levers: NAVAL_LEVERS,
        headlines: naval_headlines,
        default_modifiers: &["drm+1", "a.leader+1", "a.morale+1", "odds+1"],
        currency: Some(("odds", "odds columns")),
    },
    SystemLevers {
        systems: &["ratio"],
        levers: RATIO_LEVERS,
        headlines: ratio_headlines,
        default_modifiers: &["a.argument+1", "a.quality+1", "a.units+1", "a.reserves+1"],
        currency: Some(("a.units", "units")),
    },
    SystemLevers {
        systems: &["melee"],
        levers: MELEE_LEVERS,
        headlines: melee_headlines,
        default_modifiers: &[
            "a.attacks+1",
            "a.skill+1",
            "a.power+1",
            "a.defense+1",
            "a.discipline+1",
            "a.models+1",
        ],
        currency: Some(("a.skill", "points of skill")),
    },
    SystemLevers {
        systems: &["frontier"],
        levers: FRONTIER_LEVERS,
        headlines: frontier_headlines,
        default_modifiers: &["a.leader+1", "a.level+1"],
        currency: Some(("a.leader", "leader rating")),
    },
    SystemLevers {
        systems: &["attrition"],
        levers: ATTRITION_LEVERS,
        headlines: attrition_headlines,
        default_modifiers: &["drm+1"],
        currency: None,
    },
    SystemLevers {
        systems: &["march"],
        levers: MARCH_LEVERS,
        headlines: no_headlines,
        default_modifiers: &["drm+1"],
        currency: None,
    },
    SystemLevers {
        systems: &["naval", "storm", "pursuit", "blockade", "transport"],
        levers: TABLE_LEVERS,
        headlines: no_headlines,
        default_modifiers: &["drm+1"],
        currency: None,
    },
];

/// What `system` offers, or `None` where it offers nothing (setup).
pub fn of(system: &str) -> Option<&'static SystemLevers> {
    CATALOG.iter().find(|s| s.systems.contains(&system))
}

impl SystemLevers {
    /// The lever called `name`, or an error listing the ones there are.
    pub fn lever(&self, name: &str, system: &str) -> Result<&'static Lever, String> {
        self.levers.iter().find(|l| l.name == name).ok_or_else(|| {
            format!(
                "{system} analyses have no setting \"{}\"; the settings are: {}",
                battlelab_core::limits::echo(name),
                self.levers
                    .iter()
                    .map(|l| l.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    }
}

/// A modifier to price: a lever and how far to move it (`a.drm+1`, `odds+1`, `b.sp-2`).
#[derive(Clone, Copy, Debug)]
pub struct Modifier {
    pub lever: &'static Lever,
    pub step: i64,
}

impl Modifier {
    /// Reads `a.drm+1` (the sign is required; the step is 1 to 99).
    pub fn parse(text: &str, levers: &SystemLevers, system: &str) -> Result<Self, String> {
        let at = text.rfind(['+', '-']).ok_or_else(|| {
            format!(
                "a modifier is a setting and a signed step, e.g. \"a.drm+1\" or \"odds-1\"; got \"{}\"",
                battlelab_core::limits::echo(text)
            )
        })?;
        let (name, step) = text.split_at(at);
        let step: i64 = step
            .parse()
            .ok()
            .filter(|s: &i64| (1..=99).contains(&s.abs()))
            .ok_or_else(|| {
                format!(
                    "the step of \"{}\" must be +1 to +99 or -1 to -99",
                    battlelab_core::limits::echo(text)
                )
            })?;
        Ok(Self {
            lever: levers.lever(name.trim(), system)?,
            step,
        })
    }

    pub fn name(&self) -> String {
        format!("{}{:+}", self.lever.name, self.step)
    }

    /// The side the modifier helps or hurts: "a", "b", or "both" (a setting of the
    /// battle, like the extra DRM in A's favour, counts as "a").
    pub fn side(&self) -> &'static str {
        match self.lever.name.split_once('.') {
            Some(("b", _)) => "b",
            Some(("a", _)) => "a",
            _ => "a",
        }
    }
}

/// The odds columns of the rules a run of `variant` fights by, ascending: the printed
/// columns (field: 1:1, 3:2, 2:1, 3:1; naval: 1-1, 3-2, 2-1) and, for field battles, any
/// the file adds under `[rules.odds]` or the variant's `rules.odds`. Each is a reduced
/// ratio (larger, smaller). `None` where the system has no odds columns.
pub fn odds_columns(doc: &Doc, system: &str, variant: &str) -> Option<Vec<(u32, u32)>> {
    use battlelab_core::systems::field::battle::OddsColumn;
    let ratio = |c: &OddsColumn| (c.larger, c.smaller);
    let mut columns: Vec<(u32, u32)> = match system {
        "field" => battlelab_core::systems::field::battle::FieldRules::printed()
            .odds_columns
            .iter()
            .map(ratio)
            .collect(),
        "naval_engagement" => battlelab_core::systems::d6_tables::lookup::D6Table::naval()
            .column_labels
            .iter()
            .filter_map(|l| OddsColumn::parse_ratio(l))
            .collect(),
        _ => return None,
    };
    if system == "field" {
        let variant_rules = doc
            .get("variant")
            .and_then(toml::Value::as_array)
            .into_iter()
            .flatten()
            .filter(|v| v.get("name").and_then(toml::Value::as_str) == Some(variant))
            .filter_map(|v| v.get("rules"));
        let file_rules = doc.get("rules").into_iter().chain(variant_rules);
        for rules in file_rules {
            let added = rules.get("odds").and_then(toml::Value::as_table);
            for label in added.into_iter().flat_map(|t| t.keys()) {
                if let Some((l, s)) = OddsColumn::parse_ratio(label).filter(|(l, s)| l >= s) {
                    if !columns.iter().any(|c| same_ratio(*c, (l, s))) {
                        columns.push((l, s));
                    }
                }
            }
        }
    }
    columns
        .sort_by(|a, b| (u64::from(a.0) * u64::from(b.1)).cmp(&(u64::from(b.0) * u64::from(a.1))));
    Some(columns)
}

/// Whether two ratios are the same odds (3:2 and 6:4).
pub fn same_ratio(a: (u32, u32), b: (u32, u32)) -> bool {
    u64::from(a.0) * u64::from(b.1) == u64::from(b.0) * u64::from(a.1)
}

/// An odds column as the file writes its odds (`3:2`, or `3-2` for naval ones).
pub fn odds_label(doc: &Doc, column: (u32, u32)) -> String {
    let naval = get(doc, &["sweep", "odds"])
        .and_then(toml::Value::as_array)
        .and_then(|l| l.first())
        .and_then(toml::Value::as_str)
        .is_some_and(|t| t.contains('-'));
    format!("{}{}{}", column.0, if naval { '-' } else { ':' }, column.1)
}

/// `doc` with its odds sweep holding the one column `column`: the file's runs at that
/// column, every other axis as it was.
pub fn at_odds(doc: &Doc, column: (u32, u32)) -> Result<Doc, String> {
    let mut doc = doc.clone();
    if sweep_path(&doc, "odds").is_none() {
        return Err(NO_ODDS_SWEEP.into());
    }
    let label = odds_label(&doc, column);
    put(
        &mut doc,
        &["sweep", "odds"],
        toml::Value::Array(vec![toml::Value::String(label)]),
    )?;
    Ok(doc)
}

/// Why odds±N and the odds equivalent need an odds sweep.
pub const NO_ODDS_SWEEP: &str = "odds±N steps along the odds columns from each run's odds; this file does not sweep odds (add [sweep] odds = [\"1:1\", …])";

/// Run by run, what sets `lever` there instead of the file's key (`None` where the lever
/// is in force): a `[sweep]` or an extra run of the plan (see [`SetBy`]).
pub fn overridden(
    plan: &battlelab_core::engine::Plan,
    lever: &Lever,
) -> Vec<Option<&'static SetBy>> {
    use battlelab_core::analysis::AxisValue;
    plan.runs
        .iter()
        .map(|run| {
            lever.set_by.iter().find(|by| {
                plan.axes
                    .iter()
                    .position(|a| a == by.axis)
                    .is_some_and(|axis| {
                        let value = &run.coordinates[axis];
                        !matches!(value, AxisValue::Unset)
                            && value.to_string().starts_with(by.prefix)
                    })
            })
        })
        .collect()
}

impl SetBy {
    /// Why `lever` cannot be priced or varied where this sets it, and what to do.
    pub fn refusal(&self, lever: &Lever) -> String {
        format!(
            "{} is set by {} here, so changing it changes nothing; {}",
            lever.name, self.what, self.instead
        )
    }
}

type Doc = toml::Table;

fn get<'a>(doc: &'a Doc, path: &[&str]) -> Option<&'a toml::Value> {
    let (last, parents) = path.split_last()?;
    let mut table = doc;
    for p in parents {
        table = table.get(*p)?.as_table()?;
    }
    table.get(*last)
}

fn get_mut<'a>(doc: &'a mut Doc, path: &[&str]) -> Option<&'a mut toml::Value> {
    let (last, parents) = path.split_last()?;
    let mut table = doc;
    for p in parents {
        table = table.get_mut(*p)?.as_table_mut()?;
    }
    table.get_mut(*last)
}

/// Sets `path`, making the tables on the way.
fn put(doc: &mut Doc, path: &[&str], value: toml::Value) -> Result<(), String> {
    let (last, parents) = path.split_last().expect("a path");
    let mut table = doc;
    for p in parents {
        table = table
            .entry(p.to_string())
            .or_insert_with(|| toml::Value::Table(Doc::new()))
            .as_table_mut()
            .ok_or_else(|| format!("`{}` is not a table", path.join(".")))?;
    }
    table.insert(last.to_string(), value);
    Ok(())
}

/// The `[sweep]` entry of `parameter` (written `"a.drm" = …` or `[sweep.a] drm = …`).
fn sweep_path(doc: &Doc, parameter: &str) -> Option<Vec<String>> {
    let sweep = doc.get("sweep")?.as_table()?;
    if sweep.contains_key(parameter) {
        return Some(vec!["sweep".into(), parameter.into()]);
    }
    let (side, key) = parameter.split_once('.')?;
    sweep
        .get(side)?
        .as_table()?
        .contains_key(key)
        .then(|| vec!["sweep".into(), side.into(), key.into()])
}

/// The values a sweep entry lists, ranges written out.
fn sweep_values(value: &toml::Value) -> Result<Vec<toml::Value>, String> {
    match value {
        toml::Value::Array(list) => Ok(list.clone()),
        toml::Value::Table(range) => {
            let int = |k: &str| range.get(k).and_then(toml::Value::as_integer);
            let (from, to) = int("from")
                .zip(int("to"))
                .ok_or("a range sweep needs whole-number from and to")?;
            let step = int("step").unwrap_or(1).max(1);
            let mut values = Vec::new();
            let mut v = from;
            while v <= to && values.len() < 10_000 {
                values.push(toml::Value::Integer(v));
                v += step;
            }
            Ok(values)
        }
        _ => Err("a sweep is a list or a {from, to} range".into()),
    }
}

fn shift_value(value: &toml::Value, lever: &Lever, step: i64) -> Result<toml::Value, String> {
    match value {
        toml::Value::Integer(v) => Ok(toml::Value::Integer(v + step)),
        _ => Err(format!(
            "{} is not a whole number here, so it cannot be moved by {step:+}",
            lever.name
        )),
    }
}

fn variants_mut(doc: &mut Doc) -> Vec<&mut Doc> {
    doc.get_mut("variant")
        .and_then(toml::Value::as_array_mut)
        .map(|list| {
            list.iter_mut()
                .filter_map(toml::Value::as_table_mut)
                .collect()
        })
        .unwrap_or_default()
}

/// The melee profiles side `side` fields (by name, in `[engagement]`).
fn melee_profiles(doc: &Doc, side: &str) -> Result<Vec<String>, String> {
    let engagement = doc
        .get("engagement")
        .and_then(toml::Value::as_table)
        .ok_or("melee stats are priced on an [engagement]; this file has none (a round robin?)")?;
    let mut names = Vec::new();
    match engagement.get(side) {
        Some(toml::Value::String(name)) => names.push(name.clone()),
        Some(toml::Value::Array(list)) => {
            for entry in list {
                if let Some(name) = entry.get("unit").and_then(toml::Value::as_str) {
                    if !names.iter().any(|n| n == name) {
                        names.push(name.to_string());
                    }
                }
            }
        }
        _ => return Err(format!("[engagement] names no side {side}")),
    }
    Ok(names)
}

/// The profiles side `side` fields, each its own: a profile the other side fields too is
/// copied under a fresh name (`spearmen_a`) and `side`'s entries in `[engagement]` point
/// to the copy, so a change to its stats changes `side`'s units only.
fn own_melee_profiles(doc: &mut Doc, side: &str) -> Result<Vec<String>, String> {
    let other = melee_profiles(doc, if side == "a" { "b" } else { "a" })?;
    let mut names = Vec::new();
    for name in melee_profiles(doc, side)? {
        if !other.contains(&name) {
            names.push(name);
            continue;
        }
        let profiles = doc
            .get_mut("profiles")
            .and_then(toml::Value::as_table_mut)
            .ok_or("[engagement] names profiles, but the file has no [profiles]")?;
        let copy = profiles.get(&name).cloned().ok_or_else(|| {
            format!("[engagement] names the profile \"{name}\", which [profiles] lacks")
        })?;
        let fresh = (1..)
            .map(|i| match i {
                1 => format!("{name}_{side}"),
                i => format!("{name}_{side}{i}"),
            })
            .find(|n| !profiles.contains_key(n))
            .expect("a free name");
        profiles.insert(fresh.clone(), copy);
        let entries = doc
            .get_mut("engagement")
            .and_then(toml::Value::as_table_mut)
            .and_then(|e| e.get_mut(side))
            .expect("the side was read above");
        match entries {
            toml::Value::String(n) => *n = fresh.clone(),
            toml::Value::Array(list) => {
                for entry in list.iter_mut().filter_map(toml::Value::as_table_mut) {
                    if entry.get("unit").and_then(toml::Value::as_str) == Some(name.as_str()) {
                        entry.insert("unit".into(), toml::Value::String(fresh.clone()));
                    }
                }
            }
            _ => {}
        }
        names.push(fresh);
    }
    Ok(names)
}

/// The units listed at `list` that set their own `key` (a ratio side's
/// `units = [{ argument = 1 }, {}]`): their indices.
fn listed_units_setting(doc: &Doc, list: &[&str], key: &str) -> Vec<usize> {
    get(doc, list)
        .and_then(toml::Value::as_array)
        .map(|units| {
            (0..units.len())
                .filter(|&i| units[i].get(key).is_some())
                .collect()
        })
        .unwrap_or_default()
}

/// `doc` with `lever` moved by `step` (every swept value, or its key and every variant's
/// override of it; and every listed unit of the side that sets its own).
pub fn shifted(doc: &Doc, lever: &Lever, step: i64) -> Result<Doc, String> {
    if matches!(lever.place, Place::Odds) {
        return Err("odds±N steps along the odds columns from each run's own odds, run by run (`battlelab value` reads them); it is not a change to the file".into());
    }
    let mut doc = doc.clone();
    if let Some(path) = lever.sweep.and_then(|p| sweep_path(&doc, p)) {
        let path: Vec<&str> = path.iter().map(String::as_str).collect();
        let values = sweep_values(get(&doc, &path).expect("found"))?;
        let moved = values
            .iter()
            .map(|v| shift_value(v, lever, step))
            .collect::<Result<Vec<_>, _>>()?;
        put(&mut doc, &path, toml::Value::Array(moved))?;
    } else {
        match lever.place {
            Place::Key { default, .. } => rewrite(&mut doc, lever, &|current, what| {
                match current {
                    Some(toml::Value::Integer(v)) => Ok(toml::Value::Integer(v + step)),
                    Some(toml::Value::Array(_)) => Err(format!(
                        "`{what}` lists its entries one by one in this file, so {} cannot be moved by {step:+}; give it as a whole number (e.g. a count) to price it",
                        lever.name
                    )),
                    Some(v) => shift_value(v, lever, step),
                    None => default
                        .map(|d| toml::Value::Integer(d + step))
                        .ok_or_else(|| format!("the file gives no {what} to move")),
                }
            })?,
            Place::MeleeStat { .. } => rewrite(&mut doc, lever, &|current, what| {
                let v = current.ok_or_else(|| format!("the file gives no {what} to move"))?;
                shift_value(v, lever, step)
            })?,
            Place::SweepOnly { default } => {
                let name = lever.sweep.expect("a sweep-only lever has a sweep");
                put(
                    &mut doc,
                    &["sweep", name],
                    toml::Value::Array(vec![toml::Value::Integer(default + step)]),
                )?;
            }
            Place::Odds => unreachable!("refused above"),
        }
    }
    if let Some((list, key)) = lever.per_unit {
        for i in listed_units_setting(&doc, list, key) {
            let unit = get_mut(&mut doc, list)
                .and_then(toml::Value::as_array_mut)
                .and_then(|units| units.get_mut(i))
                .and_then(|u| u.get_mut(key))
                .expect("listed above");
            *unit = shift_value(unit, lever, step)?;
        }
    }
    Ok(doc)
}

/// A value for the place `what` from what is there (`None`: the key is left out).
type Change<'a> = dyn Fn(Option<&toml::Value>, &str) -> Result<toml::Value, String> + 'a;

/// Rewrites every place `lever` is set — its key, or the stat of each profile a melee side
/// fields (each its own) — and every `[[variant]]`'s override of it, with `change`.
fn rewrite(doc: &mut Doc, lever: &Lever, change: &Change) -> Result<(), String> {
    let (keys, variant_path): (Vec<Vec<String>>, Vec<&str>) = match lever.place {
        Place::Key {
            path, variant_path, ..
        } => (
            vec![path.iter().map(|p| p.to_string()).collect()],
            variant_path.to_vec(),
        ),
        Place::MeleeStat { side, stat } => (
            own_melee_profiles(doc, side)?
                .into_iter()
                .map(|profile| vec!["profiles".into(), profile, stat.into()])
                .collect(),
            vec![side, stat],
        ),
        Place::SweepOnly { .. } | Place::Odds => unreachable!("a key or a melee stat"),
    };
    for key in keys {
        let key: Vec<&str> = key.iter().map(String::as_str).collect();
        let value = change(get(doc, &key), &key.join("."))?;
        put(doc, &key, value)?;
    }
    if !variant_path.is_empty() {
        let what = format!("[[variant]].{}", variant_path.join("."));
        for variant in variants_mut(doc) {
            if let Some(v) = get_mut(variant, &variant_path) {
                *v = change(Some(v), &what)?;
            }
        }
    }
    Ok(())
}

/// `doc` with `lever` set to `value` everywhere: its sweep removed, its key (and every
/// variant's override) set. Refused where listed units set their own value of it (one
/// value for the whole side would erase theirs).
pub fn set(doc: &Doc, lever: &Lever, value: i64) -> Result<Doc, String> {
    if let Some((list, key)) = lever.per_unit {
        if let Some(&i) = listed_units_setting(doc, list, key).first() {
            return Err(format!(
                "{}[{i}] sets its own {key}, which one value of {} for the whole side would erase; give the side's units no {key} of their own to vary it, or price it with `battlelab value --modifier {}+1`",
                list.join("."),
                lever.name,
                lever.name
            ));
        }
    }
    let mut doc = doc.clone();
    if let Some(path) = lever.sweep.and_then(|p| sweep_path(&doc, p)) {
        let (last, parents) = path.split_last().expect("a path");
        let parents: Vec<&str> = parents.iter().map(String::as_str).collect();
        if let Some(table) = get_mut(&mut doc, &parents).and_then(toml::Value::as_table_mut) {
            table.remove(last);
        } else if let Some(sweep) = doc.get_mut("sweep").and_then(toml::Value::as_table_mut) {
            sweep.remove(last);
        }
        // An emptied [sweep] or [sweep.a] is an error to the parsers: drop it.
        if let Some(sweep) = doc.get_mut("sweep").and_then(toml::Value::as_table_mut) {
            sweep.retain(|_, v| v.as_table().is_none_or(|t| !t.is_empty()));
        }
        if doc
            .get("sweep")
            .and_then(toml::Value::as_table)
            .is_some_and(toml::Table::is_empty)
        {
            doc.remove("sweep");
        }
    }
    match lever.place {
        Place::Key { .. } | Place::MeleeStat { .. } => {
            rewrite(&mut doc, lever, &|_, _| Ok(toml::Value::Integer(value)))?;
        }
        Place::SweepOnly { .. } => {
            let name = lever.sweep.expect("a sweep-only lever has a sweep");
            put(
                &mut doc,
                &["sweep", name],
                toml::Value::Array(vec![toml::Value::Integer(value)]),
            )?;
        }
        Place::Odds => {
            return Err("odds are not a whole number; vary a side's SP or the DRM instead".into())
        }
    }
    Ok(doc)
}

/// `[value]` of an analysis file, validated against the system and its plan.
#[derive(Debug, Default)]
pub struct ValueSettings {
    pub modifiers: Option<Vec<Modifier>>,
    /// A headline key of the system, or `all`.
    pub headline: Option<String>,
    /// The run the tornado charts show (the first where the file names none).
    pub reference: usize,
}

/// Reads and checks `[value]` (`modifiers`, `headline`, `reference`) of the analysis
/// `text` of `system` with plan `plan`; a file without one gives the defaults. Errors name
/// the file, the line of `[value]`, the key and what is allowed.
pub fn value_settings(
    path: &std::path::Path,
    text: &str,
    system: &str,
    plan: &battlelab_core::engine::Plan,
) -> Result<ValueSettings, battlelab_core::analysis::AnalysisError> {
    #[derive(serde::Deserialize)]
    struct ValueFile {
        value: Option<toml::Spanned<toml::Value>>,
    }
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct ValueSpec {
        modifiers: Option<Vec<String>>,
        headline: Option<String>,
        reference: Option<toml::Table>,
    }
    let source = battlelab_core::analysis::Source::new(path, text);
    let Some(value) = toml::from_str::<ValueFile>(text).ok().and_then(|f| f.value) else {
        return Ok(ValueSettings::default());
    };
    let line = Some(source.line_of(value.span()));
    let error = |key: &str, message: String| source.error_at(line, format!("value{key}"), message);
    let spec: ValueSpec = value.into_inner().try_into().map_err(|e: toml::de::Error| {
        error(
            "",
            format!(
                "{}; allowed keys: modifiers (a list like [\"a.drm+1\"]), headline (a key), reference (a table of axis values)",
                e.message()
            ),
        )
    })?;
    let levers = of(system).ok_or_else(|| {
        error(
            "",
            format!("{system} analyses have no settings to price; remove [value]"),
        )
    })?;
    let modifiers = spec
        .modifiers
        .map(|list| {
            list.iter()
                .map(|m| {
                    let m =
                        Modifier::parse(m, levers, system).map_err(|e| error(".modifiers", e))?;
                    // A modifier the plan sets in every run would price nothing.
                    let set = overridden(plan, m.lever);
                    match set.first() {
                        Some(Some(by)) if set.iter().all(Option::is_some) => Err(error(
                            ".modifiers",
                            format!("{}: {}", m.name(), by.refusal(m.lever)),
                        )),
                        _ => Ok(m),
                    }
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    if let Some(key) = &spec.headline {
        let all = (levers.headlines)();
        if key != "all" && !all.iter().any(|h| &h.key == key) {
            return Err(error(
                ".headline",
                format!(
                    "no headline \"{}\" for {system}; headlines: {}, or all",
                    battlelab_core::limits::echo(key),
                    all.iter()
                        .map(|h| h.key.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    }
    let reference = match &spec.reference {
        None => 0,
        Some(table) => {
            let wanted: Vec<(String, String)> = table
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().map_or(v.to_string(), str::to_string)))
                .collect();
            select(plan, &wanted).map_err(|e| error(".reference", e))?[0]
        }
    };
    Ok(ValueSettings {
        modifiers,
        headline: spec.headline,
        reference,
    })
}

/// The runs of `plan` where every `axis=value` holds (`variant=NAME` too); an error names
/// the axes and values there are.
pub fn select(
    plan: &battlelab_core::engine::Plan,
    wanted: &[(String, String)],
) -> Result<Vec<usize>, String> {
    use battlelab_core::analysis::AxisValue;
    let mut runs: Vec<usize> = (0..plan.runs.len()).collect();
    for (key, value) in wanted {
        let value_at = |r: usize| -> AxisValue {
            if key == "variant" {
                AxisValue::Text(plan.runs[r].variant.clone())
            } else {
                let a = plan.axes.iter().position(|a| a == key).expect("checked");
                plan.runs[r].coordinates[a].clone()
            }
        };
        let all = if key == "variant" {
            plan.variants().iter().map(|v| v.to_string()).collect()
        } else if let Some(a) = plan.axes.iter().position(|a| a == key) {
            plan.axis_values(a)
        } else {
            let mut allowed = vec!["variant".to_string()];
            allowed.extend(plan.axes.iter().cloned());
            return Err(format!(
                "\"{}\" is not a column of this analysis's runs; allowed: {}",
                battlelab_core::limits::echo(key),
                allowed.join(", ")
            ));
        };
        let odds = battlelab_core::systems::field::battle::OddsColumn::parse_ratio(value);
        let holds = |r: usize| match value_at(r) {
            AxisValue::Odds { larger, smaller } if key != "variant" => {
                odds.is_some_and(|(l, s)| {
                    u64::from(l) * u64::from(smaller) == u64::from(s) * u64::from(larger)
                })
            }
            v => v.to_string() == *value,
        };
        if !(0..plan.runs.len()).any(holds) {
            return Err(format!(
                "{key}={} is not on the grid; {key} takes: {}",
                battlelab_core::limits::echo(value),
                all.join(", ")
            ));
        }
        runs.retain(|&r| holds(r));
    }
    if runs.is_empty() {
        return Err("no run matches all of these values together".into());
    }
    Ok(runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Doc {
        text.parse().expect("toml")
    }

    fn field(name: &str) -> &'static Lever {
        of("field").unwrap().lever(name, "field").unwrap()
    }

    #[test]
    fn a_key_moves_with_its_variant_overrides_and_defaults() {
        let d = doc("[side.a]\nsp = 3\n[rules]\nround_limit = 4\n[[variant]]\nname = \"x\"\nrules = { round_limit = 2 }\n");
        let moved = shifted(&d, field("round_limit"), 1).unwrap();
        assert_eq!(
            get(&moved, &["rules", "round_limit"]).unwrap().as_integer(),
            Some(5)
        );
        let variant = &moved["variant"].as_array().unwrap()[0];
        assert_eq!(variant["rules"]["round_limit"].as_integer(), Some(3));
        // Left out: the parser's default, moved.
        let moved = shifted(&d, field("a.drm"), -2).unwrap();
        assert_eq!(
            get(&moved, &["side", "a", "drm"]).unwrap().as_integer(),
            Some(-2)
        );
    }

    #[test]
    fn a_swept_setting_moves_every_value_and_odds_are_read_column_by_column() {
        let d = doc("[sweep]\nodds = [\"1:1\", \"2:1\"]\ndrm = { from = -1, to = 1 }\n[sweep.a]\nleader = [0, 2]\n");
        // Odds are not moved in the file: value reads each run's neighbouring columns.
        assert!(shifted(&d, field("odds"), 1)
            .unwrap_err()
            .contains("steps along the odds columns"));
        let at = at_odds(&d, (3, 1)).unwrap();
        assert_eq!(at["sweep"]["odds"], toml::Value::Array(vec!["3:1".into()]));
        let moved = shifted(&d, field("drm"), 1).unwrap();
        assert_eq!(
            moved["sweep"]["drm"],
            toml::Value::Array(vec![0.into(), 1.into(), 2.into()])
        );
        let moved = shifted(&d, field("a.leader"), 1).unwrap();
        assert_eq!(
            moved["sweep"]["a"]["leader"],
            toml::Value::Array(vec![1.into(), 3.into()])
        );
    }

    #[test]
    fn odds_columns_are_the_printed_ones_and_those_the_file_adds() {
        let d = doc("[sweep]\nodds = [\"1:1\"]\n[rules.odds]\n\"4:1\" = 5\n\"3:2\" = 2\n[[variant]]\nname = \"wide\"\nrules = { odds = { \"5:2\" = 3, \"10:2\" = 6 } }\n[[variant]]\nname = \"plain\"\n");
        assert_eq!(
            odds_columns(&d, "field", "plain").unwrap(),
            vec![(1, 1), (3, 2), (2, 1), (3, 1), (4, 1)]
        );
        assert_eq!(
            odds_columns(&d, "field", "wide").unwrap(),
            vec![(1, 1), (3, 2), (2, 1), (5, 2), (3, 1), (4, 1), (5, 1)]
        );
        let naval = doc("[sweep]\nodds = [\"1-1\"]\n");
        assert_eq!(
            odds_columns(&naval, "naval_engagement", "base").unwrap(),
            vec![(1, 1), (3, 2), (2, 1)]
        );
        assert_eq!(odds_label(&naval, (3, 2)), "3-2");
        assert!(odds_columns(&d, "ratio", "base").is_none());
    }

    #[test]
    fn a_melee_side_gets_its_own_copy_of_a_shared_profile() {
        let levers = of("melee").unwrap();
        let d = doc("[profiles.militia]\nskill = 3\n[profiles.riders]\nskill = 2\n[engagement]\na = \"militia\"\nb = [{ unit = \"militia\", facing = \"front\" }, { unit = \"riders\", facing = \"flank\" }]\n");
        let moved = shifted(&d, levers.lever("a.skill", "melee").unwrap(), 1).unwrap();
        assert_eq!(moved["engagement"]["a"].as_str(), Some("militia_a"));
        assert_eq!(
            moved["profiles"]["militia_a"]["skill"].as_integer(),
            Some(4)
        );
        assert_eq!(moved["profiles"]["militia"]["skill"].as_integer(), Some(3));
        // B's shared profile is copied for B; its own (riders) is moved in place.
        let moved = shifted(&d, levers.lever("b.skill", "melee").unwrap(), -1).unwrap();
        assert_eq!(moved["engagement"]["a"].as_str(), Some("militia"));
        let b = moved["engagement"]["b"].as_array().unwrap();
        assert_eq!(b[0]["unit"].as_str(), Some("militia_b"));
        assert_eq!(
            moved["profiles"]["militia_b"]["skill"].as_integer(),
            Some(2)
        );
        assert_eq!(moved["profiles"]["riders"]["skill"].as_integer(), Some(1));
        assert_eq!(moved["profiles"]["militia"]["skill"].as_integer(), Some(3));
    }

    #[test]
    fn a_ratio_sides_listed_units_move_with_the_side() {
        let levers = of("ratio").unwrap();
        let argument = levers.lever("a.argument", "ratio").unwrap();
        let d =
            doc("[side.a]\nargument = 1\nunits = [{ argument = -1 }, {}]\n[side.b]\nunits = 2\n");
        let moved = shifted(&d, argument, 1).unwrap();
        assert_eq!(moved["side"]["a"]["argument"].as_integer(), Some(2));
        let units = moved["side"]["a"]["units"].as_array().unwrap();
        assert_eq!(units[0]["argument"].as_integer(), Some(0));
        assert!(units[1].get("argument").is_none());
        assert!(set(&d, argument, 0)
            .unwrap_err()
            .contains("side.a.units[0] sets its own argument"));
        let units = levers.lever("a.units", "ratio").unwrap();
        assert!(shifted(&d, units, 1)
            .unwrap_err()
            .contains("lists its entries one by one"));
    }

    #[test]
    fn set_removes_the_sweep_and_sets_the_key() {
        let d = doc("[side.a]\nsp = 3\n[sweep.a]\nsp = [1, 2]\n");
        let set = set(&d, field("a.sp"), 7).unwrap();
        assert!(set.get("sweep").is_none(), "{set:?}");
        assert_eq!(
            get(&set, &["side", "a", "sp"]).unwrap().as_integer(),
            Some(7)
        );
    }

    #[test]
    fn modifiers_read_a_setting_and_a_signed_step() {
        let levers = of("field").unwrap();
        let m = Modifier::parse("a.drm+1", levers, "field").unwrap();
        assert_eq!((m.lever.name, m.step, m.side()), ("a.drm", 1, "a"));
        assert_eq!(
            Modifier::parse("b.sp-2", levers, "field").unwrap().name(),
            "b.sp-2"
        );
        assert!(Modifier::parse("a.drm", levers, "field")
            .unwrap_err()
            .contains("signed step"));
        assert!(Modifier::parse("a.luck+1", levers, "field")
            .unwrap_err()
            .contains("the settings are: odds, drm"));
    }
}
