//! The rules-file battles the benches time: the shipped rules files' games, parsed from
//! the files in `rules/` at the repository's root.
