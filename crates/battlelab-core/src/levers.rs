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
//! It lives in the core (no files, no threads, no Polars) because the command line's
//! `value` and the report page's WebAssembly module price with the same code
//! ([`crate::pricing`]); a companion file comes from a [`crate::files::Files`] provider.
//!
//! Odds are not moved in the file: `odds±N` and the odds-column equivalent are read along
//! the odds columns of the rules as run ([`odds_columns`]: the printed ones and any the
//! file adds), run by run, by `value` itself.

use crate::engine::headline::Headline;

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

pub use crate::keys::SetBy;

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
    /// The documented key it is (its one description: type, range, default, meaning).
    pub key: &'static crate::keys::KeyDoc,
}

/// What a system offers `value` and `solve`, derived from its keys (see [`of`]).
pub struct SystemLevers {
    pub system: &'static str,
    pub levers: &'static [Lever],
    /// The headlines, the first the default.
    pub headlines: Vec<Headline>,
    /// The modifiers priced when the file does not say.
    pub default_modifiers: &'static [&'static str],
    /// The lever equivalents are counted in, and the unit's name.
    pub currency: Option<(&'static str, &'static str)>,
    /// The odds columns a run of a variant fights by (see [`odds_columns`]).
    odds_columns: Option<crate::keys::OddsColumns>,
}

/// Every system's levers, derived once from its documented keys: a key marked priced
/// (`KeyDoc::priced`) is a lever, with the key's path, type, range, default, meaning and
/// variant override; a `{a,b}` key gives one lever per side, each moving its side alone.
/// Built once per process (the strings live as long as the process, as the key tables do).
fn catalog() -> &'static [SystemLevers] {
    static CATALOG: std::sync::OnceLock<Vec<SystemLevers>> = std::sync::OnceLock::new();
    CATALOG.get_or_init(|| {
        crate::systems::docs()
            .iter()
            .filter_map(SystemLevers::of_doc)
            .collect()
    })
}

fn leak(text: String) -> &'static str {
    Box::leak(text.into_boxed_str())
}

fn leak_path(path: &str) -> &'static [&'static str] {
    let segments: Vec<&'static str> = path.split('.').map(|s| leak(s.to_string())).collect();
    Box::leak(segments.into_boxed_slice())
}

/// The words of the first `{…}` group of a pattern (`{a,b}.drm` → a, b), or one "".
fn alternatives(pattern: &str) -> Vec<String> {
    match (pattern.find('{'), pattern.find('}')) {
        (Some(open), Some(close)) if open < close => pattern[open + 1..close]
            .split(',')
            .map(|w| w.trim().to_string())
            .collect(),
        _ => vec![String::new()],
    }
}

/// `pattern`'s `i`-th expansion, in step with the lever's name (or the pattern itself
/// where it has no group).
fn in_step(pattern: &str, i: usize) -> String {
    let all = crate::keys::expand(pattern);
    all.get(i).or(all.first()).cloned().unwrap_or_default()
}

impl SystemLevers {
    /// A system's levers from its key table; `None` where it has none (setup).
    fn of_doc(doc: &crate::keys::SystemDoc) -> Option<SystemLevers> {
        let levers: Vec<Lever> = doc.keys().flat_map(Lever::of_key).collect();
        if levers.is_empty() {
            return None;
        }
        Some(SystemLevers {
            system: doc.name,
            levers: Box::leak(levers.into_boxed_slice()),
            headlines: (doc.value.headlines)(),
            default_modifiers: doc.value.default_modifiers,
            currency: doc.value.currency,
            odds_columns: doc.value.odds_columns,
        })
    }
}

impl Lever {
    /// The levers a priced key gives: one, or one per word of its `{…}` group.
    fn of_key(key: &'static crate::keys::KeyDoc) -> Vec<Lever> {
        use crate::keys::{PricedAt, Ty};
        let Some(priced) = key.lever else {
            return Vec::new();
        };
        let pattern = if priced.name.is_empty() {
            key.sweep
        } else {
            priced.name
        };
        let names = crate::keys::expand(pattern);
        let words = alternatives(pattern);
        let type_range = match key.ty {
            Ty::Int(lo, hi) | Ty::CountOrTables(lo, hi) | Ty::IntOr(lo, hi, _) => (lo, hi),
            _ => (0, 0),
        };
        names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let word = words.get(i).cloned().unwrap_or_default();
                let path = in_step(key.path, i);
                let place = match priced.at {
                    PricedAt::Key => Place::Key {
                        path: leak_path(&path),
                        default: key.default.parse().ok(),
                        variant_path: key.variant_path().map_or(&[], |v| {
                            let v = in_step(&v, i);
                            leak_path(v.strip_prefix("[[variant]].").unwrap_or(&v))
                        }),
                    },
                    PricedAt::SweepOnly { default } => Place::SweepOnly { default },
                    PricedAt::OddsColumns => Place::Odds,
                    PricedAt::SideProfiles => Place::MeleeStat {
                        side: if word == "b" { "b" } else { "a" },
                        stat: leak(path.rsplit('.').next().unwrap_or_default().to_string()),
                    },
                };
                let set_by: Vec<SetBy> = priced
                    .set_by
                    .iter()
                    .filter(|by| by.only.is_empty() || by.only == word)
                    .copied()
                    .collect();
                Lever {
                    name: leak(name.clone()),
                    meaning: leak(lever_meaning(key, priced.at, &word, &path)),
                    place,
                    sweep: (!key.sweep.is_empty()).then(|| leak(in_step(key.sweep, i))),
                    search: priced.search.unwrap_or(type_range),
                    set_by: Box::leak(set_by.into_boxed_slice()),
                    per_unit: priced
                        .per_unit
                        .map(|(list, unit_key)| (leak_path(&in_step(list, i)), unit_key)),
                    key,
                }
            })
            .collect()
    }
}

/// A lever's meaning: its key's, said of the side it moves ("side A: a DRM in this
/// side's favour").
fn lever_meaning(
    key: &crate::keys::KeyDoc,
    at: crate::keys::PricedAt,
    word: &str,
    path: &str,
) -> String {
    use crate::keys::PricedAt;
    let meaning = key.meaning.trim_start_matches("[option] ");
    if at == PricedAt::OddsColumns {
        return "one odds column along the columns of the rules as run (the printed ones and any the file adds)".into();
    }
    match word {
        "a" | "b" => {
            let who = path
                .split('.')
                .next()
                .filter(|first| ["side", "fleet"].contains(first))
                .unwrap_or("side");
            format!("{who} {}: {meaning}", word.to_uppercase())
        }
        _ => meaning.to_string(),
    }
}

/// The systems `value` and `solve` serve: those with a priced key.
pub fn served() -> Vec<&'static str> {
    catalog().iter().map(|s| s.system).collect()
}

/// What `system` offers, or `None` where it offers nothing (setup).
pub fn of(system: &str) -> Option<&'static SystemLevers> {
    catalog().iter().find(|s| s.system == system)
}

/// What the analysis at `path` (its TOML `doc`, its companion files from `files`) offers: its system's levers — or, where
/// the system reads a companion file (a rules file), every whole-number setting that file
/// declares (each per-side one moving that side's key alone), with its headlines. Built
/// once per companion file and process.
pub fn for_file(
    files: &dyn crate::files::Files,
    path: &std::path::Path,
    doc: &Doc,
    system: &str,
) -> Option<&'static SystemLevers> {
    let system_doc = crate::systems::doc(system)?;
    let Some(companion) = system_doc.companion else {
        return of(system);
    };
    let given = doc.get(companion.key)?.as_str()?;
    let settings = (companion.settings)(files, path, given).ok()?;
    type Built = Vec<(String, String, &'static SystemLevers)>;
    static BUILT: std::sync::Mutex<Built> = std::sync::Mutex::new(Vec::new());
    let mut built = BUILT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let fingerprint = format!("{settings:?}");
    if let Some((_, _, levers)) = built
        .iter()
        .find(|(s, f, _)| s == system && *f == fingerprint)
    {
        return Some(levers);
    }
    let levers: &'static SystemLevers =
        Box::leak(Box::new(companion_levers(system_doc.name, settings)));
    built.push((system.to_string(), fingerprint, levers));
    Some(levers)
}

/// The levers of a companion file's settings.
fn companion_levers(system: &'static str, file: crate::keys::FileSettings) -> SystemLevers {
    use crate::keys::{key, Ty};
    let mut levers = Vec::new();
    for s in file.settings {
        let default = s.default.map_or("required".to_string(), |d| d.to_string());
        let what = if s.meaning.is_empty() {
            s.kind.clone()
        } else {
            s.meaning.clone()
        };
        let meaning = match s.name.split_once('.') {
            Some((side, _)) => format!("{side}: {what}"),
            None => what,
        };
        let doc: &'static crate::keys::KeyDoc = Box::leak(Box::new(
            key(
                leak(s.key.clone()),
                Ty::Int(s.min, s.max),
                leak(default),
                leak(meaning.clone()),
                "1",
            )
            .sweep(leak(s.name.clone()))
            .in_variant(),
        ));
        levers.push(Lever {
            name: leak(s.name.clone()),
            meaning: leak(meaning),
            place: Place::Key {
                path: leak_path(&s.key),
                default: s.default,
                variant_path: leak_path(&s.key),
            },
            sweep: Some(leak(s.name.clone())),
            search: (s.min, s.max),
            set_by: &[],
            per_unit: None,
            key: doc,
        });
    }
    SystemLevers {
        system,
        levers: Box::leak(levers.into_boxed_slice()),
        headlines: file.headlines,
        default_modifiers: &[],
        currency: None,
        odds_columns: None,
    }
}

impl SystemLevers {
    /// The lever called `name`, or an error listing the ones there are.
    pub fn lever(&self, name: &str, system: &str) -> Result<&'static Lever, String> {
        self.levers.iter().find(|l| l.name == name).ok_or_else(|| {
            format!(
                "{system} analyses have no setting \"{}\"; the settings are: {}",
                crate::limits::echo(name),
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
                crate::limits::echo(text)
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
                    crate::limits::echo(text)
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
    let columns = of(system)?.odds_columns?;
    let mut columns = columns(doc, variant);
    columns
        .sort_by(|a, b| (u64::from(a.0) * u64::from(b.1)).cmp(&(u64::from(b.0) * u64::from(a.1))));
    // A stable sort: of equal ratios (3:2 and 6:4) the first listed, the printed one, stays.
    columns.dedup_by(|a, b| same_ratio(*a, *b));
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
pub fn overridden(plan: &crate::engine::Plan, lever: &Lever) -> Vec<Option<&'static SetBy>> {
    use crate::analysis::AxisValue;
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

impl Lever {
    /// Why this lever cannot be priced or varied where `by` sets it, and what to do.
    pub fn refused_by(&self, by: &SetBy) -> String {
        format!(
            "{} is set by {} here, so changing it changes nothing; {}",
            self.name, by.what, by.instead
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
                        .ok_or_else(|| {
                            format!(
                                "the file gives no {what} to move (left out, it is {}); set it in the file to price it",
                                lever.key.default
                            )
                        }),
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
    files: &dyn crate::files::Files,
    path: &std::path::Path,
    text: &str,
    system: &str,
    plan: &crate::engine::Plan,
) -> Result<ValueSettings, crate::analysis::AnalysisError> {
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
    let source = crate::analysis::Source::new(path, text);
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
    let doc: Doc = text.parse().unwrap_or_default();
    let levers = for_file(files, path, &doc, system).ok_or_else(|| {
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
                            format!("{}: {}", m.name(), m.lever.refused_by(by)),
                        )),
                        _ => Ok(m),
                    }
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    if let Some(key) = &spec.headline {
        let all = levers.headlines.clone();
        if key != "all" && !all.iter().any(|h| &h.key == key) {
            return Err(error(
                ".headline",
                format!(
                    "no headline \"{}\" for {system}; headlines: {}, or all",
                    crate::limits::echo(key),
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
    plan: &crate::engine::Plan,
    wanted: &[(String, String)],
) -> Result<Vec<usize>, String> {
    use crate::analysis::AxisValue;
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
                crate::limits::echo(key),
                allowed.join(", ")
            ));
        };
        let odds = crate::rules::parse_odds_ratio(value);
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
                crate::limits::echo(value),
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
            .contains("the settings are: terrain_drm, a.sp, b.sp"));
    }

    #[test]
    fn every_lever_is_a_documented_key_searched_within_its_range() {
        use crate::keys::{self, Ty};
        let mut priced = 0;
        for doc in crate::systems::docs() {
            let levers: Vec<&Lever> = of(doc.name).map_or(vec![], |s| s.levers.iter().collect());
            let marked = doc.keys().filter(|k| k.lever.is_some()).count();
            assert_eq!(marked == 0, levers.is_empty(), "{}", doc.name);
            for lever in levers {
                priced += 1;
                assert!(
                    doc.keys().any(|k| std::ptr::eq(k, lever.key)),
                    "{}",
                    lever.name
                );
                if let Some(sweep) = lever.sweep {
                    assert!(
                        doc.sweep_parameters().iter().any(|p| p == sweep),
                        "{}: {sweep}",
                        lever.name
                    );
                }
                if let Ty::Int(lo, hi) = lever.key.ty {
                    assert!(
                        lo <= lever.search.0 && lever.search.1 <= hi,
                        "{}: {:?}",
                        lever.name,
                        lever.search
                    );
                }
                if let Place::Key { path, default, .. } = lever.place {
                    assert_eq!(default, lever.key.default.parse().ok(), "{}", lever.name);
                    assert_eq!(
                        keys::expand(lever.key.path)
                            .iter()
                            .filter(|p| p.split('.').eq(path.iter().copied()))
                            .count(),
                        1,
                        "{}",
                        lever.name
                    );
                }
            }
            let levers = of(doc.name);
            for m in doc.value.default_modifiers {
                Modifier::parse(m, levers.unwrap(), doc.name).unwrap();
            }
            if let Some((currency, _)) = doc.value.currency {
                levers.unwrap().lever(currency, doc.name).unwrap();
            }
        }
        assert!(priced > 40, "{priced}");
    }

    #[test]
    fn a_side_lever_names_its_own_side_only() {
        for doc in crate::systems::docs() {
            for lever in of(doc.name).map_or(&[][..], |s| s.levers) {
                let Some((side, _)) = lever
                    .name
                    .split_once('.')
                    .filter(|(s, _)| ["a", "b"].contains(s))
                else {
                    continue;
                };
                let other = if side == "a" { "b" } else { "a" };
                let sided = |path: &[&str]| path.contains(&side) && !path.contains(&other);
                match lever.place {
                    Place::Key {
                        path, variant_path, ..
                    } => {
                        assert!(sided(path), "{}: {path:?}", lever.name);
                        assert!(
                            variant_path.is_empty() || sided(variant_path),
                            "{}: {variant_path:?}",
                            lever.name
                        );
                    }
                    Place::MeleeStat { side: s, .. } => assert_eq!(s, side, "{}", lever.name),
                    _ => panic!("{} is a side's lever in no side's place", lever.name),
                }
                if let Some((list, _)) = lever.per_unit {
                    assert!(sided(list), "{}: {list:?}", lever.name);
                }
                for by in lever.set_by {
                    assert!(
                        by.only.is_empty() || by.only == side,
                        "{}: {}",
                        lever.name,
                        by.what
                    );
                }
            }
        }
    }
}
