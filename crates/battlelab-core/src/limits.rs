//! Every bound on what a user may ask for, in one place.
//!
//! Why this module exists: the same number must be refused the same way whether it comes
//! from an analysis file or the command line (a seed, a trial count, a DRM), and every
//! input must be bounded so that no file or flag can exhaust memory, wrap an integer or
//! run for days by accident. The file parsers and the clap definitions both read these
//! constants; errors name the bound.

/// Most trials one run may ask for (per grid point and variant), in a file or on the
/// command line: 10^12, about a day per run on one core for the slowest kernels.
pub const MAX_TRIALS: u64 = 1_000_000_000_000;
/// Largest seed: TOML integers are signed 64-bit, so the command line takes the same.
pub const MAX_SEED: u64 = i64::MAX as u64;
/// Largest analysis file read, in bytes. Real analyses are a few kilobytes.
pub const MAX_FILE_BYTES: u64 = 1 << 20;
/// Most items in any one list of an analysis file (sweep values, units, CRT rows …) and
/// most keys in any one table; ranges hold at most as many values.
pub const MAX_LIST_ITEMS: usize = 1001;
/// Deepest nesting of lists and tables in an analysis file.
pub const MAX_NESTING: usize = 16;
/// Longest report, variant or other name that becomes part of a file name, in characters.
pub const MAX_NAME_CHARS: usize = 100;
/// Most characters of a user's value echoed back in an error message.
pub const MAX_ECHO_CHARS: usize = 60;
/// Largest DRM or modifier taken by number on the command line, either sign. The
/// tables clamp far below this; the bound keeps sums of DRMs from overflowing.
pub const MAX_DRM_ARG: i64 = 99;
/// Largest strength (SP) a force, stack or hex may have anywhere (docs/systems/field.md: the
/// counters and tables never come near it).
pub const MAX_SP: u32 = 999;

/// `text` cut to [`MAX_ECHO_CHARS`] characters (with "…" when cut), for error messages
/// that quote what the user wrote.
pub fn echo(text: &str) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(MAX_ECHO_CHARS).collect();
    if chars.next().is_some() {
        format!("{head}… ({} characters)", text.chars().count())
    } else {
        head
    }
}

/// Longest error message shown, in characters.
pub const MAX_MESSAGE_CHARS: usize = 600;

/// A message that may quote user input, made short: every run of more than
/// [`MAX_ECHO_CHARS`] characters without a space is cut as [`echo`] cuts it, and the
/// whole is at most [`MAX_MESSAGE_CHARS`]. Every analysis error passes through it, so no
/// name or value in a file, however long, floods the terminal.
pub fn tidy(message: &str) -> String {
    // A control character quoted from the file (other than a line break or a tab) is
    // written as its escape, `\u{1b}`: an error message must not drive the terminal.
    let escaped: String;
    let message = if message
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        escaped = message
            .chars()
            .map(|c| {
                if c.is_control() && c != '\n' && c != '\t' {
                    c.escape_unicode().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect();
        &escaped
    } else {
        message
    };
    let mut out = String::new();
    for (i, word) in message.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        if word.chars().count() > MAX_ECHO_CHARS {
            out.push_str(&echo(word));
        } else {
            out.push_str(word);
        }
        if out.chars().count() > MAX_MESSAGE_CHARS {
            let cut: String = out.chars().take(MAX_MESSAGE_CHARS).collect();
            return cut + "…";
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tidy_writes_control_characters_as_escapes() {
        assert_eq!(
            tidy("got \"a\u{1b}[31mb\u{9b}c\u{7f}\"\nnext\tline"),
            "got \"a\\u{1b}[31mb\\u{9b}c\\u{7f}\"\nnext\tline"
        );
    }

    #[test]
    fn tidy_cuts_long_words_and_long_messages() {
        assert_eq!(
            tidy("unknown unit \"B2\"; allowed: B1, B3"),
            "unknown unit \"B2\"; allowed: B1, B3"
        );
        let long = format!("allowed: B1, {}, B3", "w".repeat(10_000));
        let t = tidy(&long);
        assert!(
            t.starts_with("allowed: B1, www") && t.ends_with(" B3"),
            "{t}"
        );
        assert!(t.len() < 200, "{t}");
        let many = "word ".repeat(10_000);
        assert!(tidy(&many).chars().count() <= MAX_MESSAGE_CHARS + 1);
    }

    #[test]
    fn echo_truncates_long_values_and_says_how_long_they_were() {
        assert_eq!(echo("short"), "short");
        let long = "x".repeat(1_000_000);
        let shown = echo(&long);
        assert!(shown.len() < 100, "{shown}");
        assert!(shown.ends_with("… (1000000 characters)"));
    }
}
