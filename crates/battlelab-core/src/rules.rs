//! What every system's rules share: the error their validation returns, and the reading
//! of a strength ratio (`3:2`) that field battles, naval engagements, the one-roll tables,
//! sweeps and expectations all accept.
//!
//! Why this module exists: each system's rules live in its own folder under
//! [`systems`](crate::systems); these two pieces belong to none of them, and keeping
//! them here lets the analysis reader and the engine use them without depending on a
//! system.

/// A typed error from building a system's rules or a battle: which field, what is wrong
/// and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct RulesError {
    pub field: String,
    pub message: String,
}

impl RulesError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// Parses `3:2`, `3-2` or `3 to 2` into a reduced ratio `(larger, smaller)`.
pub fn parse_odds_ratio(text: &str) -> Option<(u32, u32)> {
    let text = text.trim();
    let (l, s) = text
        .split_once(':')
        .or_else(|| text.split_once('-'))
        .or_else(|| text.split_once(" to "))?;
    let (l, s): (u32, u32) = (l.trim().parse().ok()?, s.trim().parse().ok()?);
    if l == 0 || s == 0 {
        return None;
    }
    let g = gcd(l, s);
    Some((l / g, s / g))
}

fn gcd(mut a: u32, mut b: u32) -> u32 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}
