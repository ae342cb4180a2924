//! Frontier quick battles ("A Dark and Bloody Ground" rule 19, docs/systems/frontier.md):
//! the single rolls of a battle round — fire combat (19.2.1), movement (19.2.2) and
//! recovery (19.2.4) — and the melee terrain multipliers (19.2.3).
//!
//! Why this module exists: every roll of the quick battle is one d6 against a target
//! built from the unit's type, the terrain, the weather, a leader and the side's
//! commitment level. Each rule is written here once, as a function of the face rolled,
//! so the exact single-step tables (`battlelab table frontier-fire | frontier-move |
//! frontier-recovery`) and any kernel count the very same faces.

use crate::rules::RulesError;

/// The side's commitment/mobilisation level: 1 to 5. A move or a recovery needs a d6 at
/// or under it and a 6 always fails, so levels above 5 could not differ from 5.
pub const MAX_LEVEL: u32 = 5;
/// Leader command ratings (19.1): 1, 2 or 3; 0 means no leader stacked with the unit.
pub const MAX_LEADER: u32 = 3;
/// The largest printed fire CF accepted.
pub const MAX_FIRE_CF: u32 = 10;

/// Unit types of the quick battle's tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum UnitType {
    Warrior,
    Regular,
    Militia,
    Rifle,
}

impl UnitType {
    pub const ALL: [UnitType; 4] = [Self::Warrior, Self::Regular, Self::Militia, Self::Rifle];
    pub const NAMES: &'static str = "warrior, regular, militia, rifle";

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == text)
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Warrior => "warrior",
            Self::Regular => "regular",
            Self::Militia => "militia",
            Self::Rifle => "rifle",
        }
    }
}

/// Terrain of the battle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Terrain {
    Rough,
    Wilderness,
    Settled,
}

impl Terrain {
    pub const ALL: [Terrain; 3] = [Self::Rough, Self::Wilderness, Self::Settled];
    pub const NAMES: &'static str = "rough, wilderness, settled";

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == text)
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Rough => "rough",
            Self::Wilderness => "wilderness",
            Self::Settled => "settled",
        }
    }
}

/// The fire table of 19.2.1 for one type in one terrain: a multiplier of the printed CF
/// and a die-roll modifier, which the `*` entries lose in severe weather.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FireTerrain {
    pub cf_multiplier: u32,
    pub drm: i32,
    /// `*`: no DR modifier in severe weather.
    pub waived_in_severe_weather: bool,
}

/// 19.2.1's terrain table (NE = no effect).
pub fn fire_terrain(unit: UnitType, terrain: Terrain) -> FireTerrain {
    use Terrain::*;
    use UnitType::*;
    let (cf_multiplier, drm, waived_in_severe_weather) = match (unit, terrain) {
        (Warrior, _) => (1, 0, false),
        (Regular, Rough) => (1, 0, false),
        (Regular, Wilderness) => (1, -1, true),
        (Regular, Settled) => (2, -1, true),
        (Militia, Rough | Wilderness) => (1, 0, false),
        (Militia, Settled) => (1, -1, false),
        (Rifle, Rough) => (1, 0, false),
        (Rifle, Wilderness) => (1, -1, true),
        (Rifle, Settled) => (1, -1, false),
    };
    FireTerrain {
        cf_multiplier,
        drm,
        waived_in_severe_weather,
    }
}

/// One unit's fire: its type, printed fire CF, the terrain and the weather.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FireRoll {
    pub unit: UnitType,
    pub cf: u32,
    pub terrain: Terrain,
    pub severe_weather: bool,
}

impl FireRoll {
    pub fn validate(&self) -> Result<(), RulesError> {
        if !(1..=MAX_FIRE_CF).contains(&self.cf) {
            return Err(RulesError::new(
                "cf",
                format!(
                    "fire CF {}: the printed fire CF is 1 to {MAX_FIRE_CF}",
                    self.cf
                ),
            ));
        }
        Ok(())
    }

    /// The CF and the die-roll modifier after terrain and weather.
    pub fn modified(&self) -> (u32, i32) {
        let t = fire_terrain(self.unit, self.terrain);
        let drm = if t.waived_in_severe_weather && self.severe_weather {
            0
        } else {
            t.drm
        };
        (self.cf * t.cf_multiplier, drm)
    }

    /// Whether `face` (1–6) hits: the modified roll at or under the modified CF; a 1
    /// always hits and a 6 always misses.
    pub fn hits(&self, face: u32) -> bool {
        let (cf, drm) = self.modified();
        face == 1 || (face != 6 && face as i64 + i64::from(drm) <= i64::from(cf))
    }

    /// Faces of the d6 that hit (out of 6).
    pub fn hitting_faces(&self) -> u32 {
        (1..=6).filter(|&f| self.hits(f)).count() as u32
    }
}

/// One stack's movement roll (19.2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveRoll {
    /// The side's commitment/mobilisation level, 1–5.
    pub level: u32,
    /// The unit's type; a stack is as its most restricted member (see `with_regular`).
    pub unit: UnitType,
    pub terrain: Terrain,
    /// Command rating of a leader stacked with it (0: none), subtracted from the roll.
    pub leader: u32,
    pub severe_weather: bool,
    /// Stacked with a regular unit (settled terrain gives regulars and any unit stacked
    /// with them −1).
    pub with_regular: bool,
    /// Enemy units have moved atop this stack (+1).
    pub enemy_atop: bool,
    /// First round, the side that won surprise, stacked with a leader (−1).
    pub surprise_bonus: bool,
}

impl MoveRoll {
    pub fn validate(&self) -> Result<(), RulesError> {
        check_level(self.level)?;
        check_leader(self.leader)?;
        if self.surprise_bonus && self.leader == 0 {
            return Err(RulesError::new(
                "surprise",
                "the surprise −1 applies to units stacked with a leader; give a leader rating (1-3)",
            ));
        }
        Ok(())
    }

    /// The sum of every movement DRM (cumulative).
    pub fn drm(&self) -> i32 {
        let mut drm = -(self.leader as i32);
        if self.terrain == Terrain::Settled && (self.unit == UnitType::Regular || self.with_regular)
        {
            drm -= 1;
        }
        if self.terrain == Terrain::Rough && self.unit != UnitType::Warrior {
            drm += 1;
        }
        drm += i32::from(self.severe_weather) + i32::from(self.enemy_atop)
            - i32::from(self.surprise_bonus);
        drm
    }

    /// Whether `face` moves the stack: a 1 always moves; a 6 (or a modified roll of 6
    /// or more, which no level reaches) never does; otherwise the modified roll must be
    /// at or under the level. "A DR of 6 or more" is read like fire and recovery: the
    /// natural 6 fails whatever the modifiers.
    pub fn moves(&self, face: u32) -> bool {
        let roll = face as i64 + i64::from(self.drm());
        face == 1 || (face != 6 && roll <= i64::from(self.level))
    }

    pub fn moving_faces(&self) -> u32 {
        (1..=6).filter(|&f| self.moves(f)).count() as u32
    }
}

/// One recovery roll (19.2.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecoveryRoll {
    pub level: u32,
    /// Command rating of a leader stacked with the unit (0: none), subtracted.
    pub leader: u32,
}

impl RecoveryRoll {
    pub fn validate(&self) -> Result<(), RulesError> {
        check_level(self.level)?;
        check_leader(self.leader)
    }

    /// Whether `face` recovers the unit one level: a 6 never does; otherwise the roll
    /// less the leader's rating must be at or under the level.
    pub fn recovers(&self, face: u32) -> bool {
        face != 6 && face as i64 - i64::from(self.leader) <= i64::from(self.level)
    }

    pub fn recovering_faces(&self) -> u32 {
        (1..=6).filter(|&f| self.recovers(f)).count() as u32
    }
}

/// Melee CF multiplier of 19.2.3.
pub fn melee_multiplier(unit: UnitType, terrain: Terrain) -> u32 {
    use Terrain::*;
    use UnitType::*;
    match (unit, terrain) {
        (Warrior, Rough) => 3,
        (Warrior, _) => 2,
        (Regular | Rifle, _) => 1,
        (Militia, Wilderness) => 1,
        (Militia, _) => 2,
    }
}

fn check_level(level: u32) -> Result<(), RulesError> {
    if !(1..=MAX_LEVEL).contains(&level) {
        return Err(RulesError::new(
            "level",
            format!("commitment level {level}: the game's commitment/mobilisation levels are 1 to {MAX_LEVEL}"),
        ));
    }
    Ok(())
}

fn check_leader(leader: u32) -> Result<(), RulesError> {
    if leader > MAX_LEADER {
        return Err(RulesError::new(
            "leader",
            format!(
                "leader rating {leader}: command ratings are 1 to {MAX_LEADER} (0 for no leader)"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fire(unit: UnitType, terrain: Terrain, cf: u32, severe: bool) -> u32 {
        FireRoll {
            unit,
            cf,
            terrain,
            severe_weather: severe,
        }
        .hitting_faces()
    }

    #[test]
    fn fire_by_hand() {
        use Terrain::*;
        use UnitType::*;
        // Warrior CF 3 anywhere: faces 1, 2, 3 hit.
        assert_eq!(fire(Warrior, Settled, 3, false), 3);
        // Regular CF 3 in settled: CF 6 and −1: faces 1–6 would all pass but 6 misses → 5.
        assert_eq!(fire(Regular, Settled, 3, false), 5);
        // CF 2 in severe weather: the −1 goes, the doubling stays: CF 4, faces 1–4.
        assert_eq!(fire(Regular, Settled, 2, true), 4);
        // Regular CF 2 in wilderness: −1 → faces 1, 2, 3 → 3; severe weather: 1, 2 → 2.
        assert_eq!(fire(Regular, Wilderness, 2, false), 3);
        assert_eq!(fire(Regular, Wilderness, 2, true), 2);
        // Militia in settled keeps its −1 in severe weather (no asterisk).
        assert_eq!(fire(Militia, Settled, 2, true), 3);
        // Rifle: wilderness −1* (waived in severe weather), settled −1 (kept).
        assert_eq!(fire(Rifle, Wilderness, 1, true), 1);
        assert_eq!(fire(Rifle, Settled, 1, true), 2);
        // A 1 always hits even at CF 0-ish levels; a 6 always misses at CF 10.
        assert_eq!(fire(Warrior, Rough, 1, false), 1);
        assert_eq!(fire(Warrior, Rough, 10, false), 5);
    }

    #[test]
    fn movement_by_hand() {
        let base = MoveRoll {
            level: 3,
            unit: UnitType::Militia,
            terrain: Terrain::Wilderness,
            leader: 0,
            severe_weather: false,
            with_regular: false,
            enemy_atop: false,
            surprise_bonus: false,
        };
        assert_eq!(base.moving_faces(), 3); // 1, 2, 3
                                            // Leader 2: faces up to 5 (roll − 2 ≤ 3); a 6 − 2 = 4 > 3 stays.
        assert_eq!(MoveRoll { leader: 2, ..base }.moving_faces(), 5);
        // Rough +1 for non-warriors, severe +1, enemy atop +1: roll + 3 ≤ 3 only for the 1.
        let hard = MoveRoll {
            terrain: Terrain::Rough,
            severe_weather: true,
            enemy_atop: true,
            ..base
        };
        assert_eq!(hard.moving_faces(), 1);
        // A warrior in rough terrain does not take the +1.
        assert_eq!(
            MoveRoll {
                unit: UnitType::Warrior,
                terrain: Terrain::Rough,
                ..base
            }
            .moving_faces(),
            3
        );
        // Level 5, leader 3, settled regular (−1): faces 1–5 move; the natural 6 stays
        // although 6 − 4 = 2 ≤ 5.
        let easy = MoveRoll {
            level: 5,
            unit: UnitType::Regular,
            terrain: Terrain::Settled,
            leader: 3,
            ..base
        };
        assert_eq!(easy.moving_faces(), 5);
    }

    #[test]
    fn recovery_by_hand() {
        assert_eq!(
            RecoveryRoll {
                level: 2,
                leader: 0
            }
            .recovering_faces(),
            2
        );
        assert_eq!(
            RecoveryRoll {
                level: 2,
                leader: 3
            }
            .recovering_faces(),
            5
        );
        assert_eq!(
            RecoveryRoll {
                level: 5,
                leader: 3
            }
            .recovering_faces(),
            5
        );
        assert_eq!(
            RecoveryRoll {
                level: 1,
                leader: 0
            }
            .recovering_faces(),
            1
        );
    }

    #[test]
    fn melee_multipliers() {
        assert_eq!(melee_multiplier(UnitType::Warrior, Terrain::Rough), 3);
        assert_eq!(melee_multiplier(UnitType::Militia, Terrain::Wilderness), 1);
        assert_eq!(melee_multiplier(UnitType::Militia, Terrain::Settled), 2);
        assert_eq!(melee_multiplier(UnitType::Regular, Terrain::Settled), 1);
    }
}
