//! What a person is asked to allow must read as what runs. Characters that draw as nothing
//! or that reorder what follows (bidi controls, zero-width and other format characters,
//! control characters, spaces that are not a space) are shown as visible escapes, `\u{202E}`,
//! with a warning line that names them; letters outside ASCII, which can pass for ASCII ones
//! (Cyrillic `а` for Latin `a`), are named in the warning too.

/// A piece of text as drawn: as written, or one character shown as its escape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Text(String),
    /// Drawn as `\u{XXXX}`.
    Escape(char),
}

/// A text ready to draw, and what it hid.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Revealed {
    pub pieces: Vec<Piece>,
    /// The distinct escaped characters, in order of first appearance.
    pub hidden: Vec<char>,
    /// The distinct letters outside ASCII, in order of first appearance.
    pub lookalikes: Vec<char>,
}

/// How `c` is escaped when shown: `\u{202E}`.
pub fn escape(c: char) -> String {
    format!("\\u{{{:04X}}}", c as u32)
}

/// Whether `c` draws as nothing, reorders text, or passes for a plain space or line break.
pub fn is_hidden(c: char) -> bool {
    let u = c as u32;
    match c {
        '\n' | '\t' | ' ' => false,
        _ if c.is_control() => true,
        _ => matches!(u,
            // Format characters (Unicode category Cf): bidi controls, zero-width characters,
            // joiners, invisible operators, the byte-order mark, tags.
            0x00AD | 0x0600..=0x0605 | 0x061C | 0x06DD | 0x070F | 0x0890..=0x0891 | 0x08E2 | 0x180E
            | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x206F | 0xFEFF
            | 0xFFF9..=0xFFFB | 0x110BD | 0x110CD | 0x13430..=0x1343F | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A | 0xE0001 | 0xE0020..=0xE007F
            // Marks and fillers that draw as nothing: the combining grapheme joiner, variation
            // selectors, Hangul fillers, the Mongolian free variation selectors.
            | 0x034F | 0x180B..=0x180D | 0x180F | 0xFE00..=0xFE0F | 0xE0100..=0xE01EF
            | 0x115F | 0x1160 | 0x3164 | 0xFFA0
            // Spaces and breaks other than the plain ones: they look like a space or a new line,
            // and a shell does not take them as one.
            | 0x00A0 | 0x1680 | 0x2000..=0x200A | 0x2028 | 0x2029 | 0x202F | 0x205F | 0x3000
        ),
    }
}

/// `\u{XXXX}` at the start of `s`: the character it writes and its length in characters.
fn escaped_at(s: &str) -> Option<(char, usize)> {
    let rest = s.strip_prefix("\\u{")?;
    let end = rest.find('}')?;
    let hex = &rest[..end];
    if hex.is_empty() || hex.len() > 6 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let c = char::from_u32(u32::from_str_radix(hex, 16).ok()?)?;
    Some((c, 4 + hex.len()))
}

/// Whether `c` reorders the text around it.
pub fn is_bidi(c: char) -> bool {
    matches!(c as u32, 0x061C | 0x200E | 0x200F | 0x202A..=0x202E | 0x2066..=0x2069)
}

/// `text` with every hidden character as an escape, and what it hid.
pub fn reveal(text: &str) -> Revealed {
    let mut out = Revealed::default();
    let mut run = String::new();
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        // The real gateway escapes hidden characters itself (`\u{202E}` as text): such an
        // escape is shown and named as the hidden character it stands for.
        let written = (c == '\\').then(|| escaped_at(&text[i..])).flatten().filter(|(h, _)| is_hidden(*h));
        // Its escaped line break (`\u{A}`) is shown as written, then breaks the line there.
        if c == '\\' && escaped_at(&text[i..]).is_some_and(|(h, _)| h == '\n') {
            run.push_str("\\u{A}\n");
            for _ in 1..5 {
                chars.next();
            }
            continue;
        }
        let (c, hidden) = match written {
            Some((h, len)) => {
                for _ in 1..len {
                    chars.next();
                }
                (h, true)
            }
            None => (c, is_hidden(c)),
        };
        if hidden {
            if !run.is_empty() {
                out.pieces.push(Piece::Text(std::mem::take(&mut run)));
            }
            out.pieces.push(Piece::Escape(c));
            if !out.hidden.contains(&c) {
                out.hidden.push(c);
            }
            continue;
        }
        if !c.is_ascii() && c.is_alphabetic() && !out.lookalikes.contains(&c) {
            out.lookalikes.push(c);
        }
        run.push(c);
    }
    if !run.is_empty() {
        out.pieces.push(Piece::Text(run));
    }
    out
}

impl Revealed {
    /// The warning line to show under the text, if it hid anything.
    pub fn warning(&self) -> Option<String> {
        let mut lines = Vec::new();
        if !self.hidden.is_empty() {
            let names: Vec<String> = self.hidden.iter().take(6).map(|&c| describe(c)).collect();
            let more = if self.hidden.len() > 6 { format!(" and {} more", self.hidden.len() - 6) } else { String::new() };
            let what = if self.hidden.iter().any(|&c| is_bidi(c)) {
                "characters that are invisible or change the direction of the text"
            } else {
                "characters that are invisible or look like a space"
            };
            lines.push(format!("Contains {what}, shown as escapes: {}{more}.", names.join(", ")));
        }
        if !self.lookalikes.is_empty() {
            let shown: Vec<String> = self.lookalikes.iter().take(6).map(|&c| format!("{c} (U+{:04X})", c as u32)).collect();
            let more = if self.lookalikes.len() > 6 { format!(" and {} more", self.lookalikes.len() - 6) } else { String::new() };
            lines.push(format!("Contains letters outside ASCII, which can look like others: {}{more}.", shown.join(", ")));
        }
        (!lines.is_empty()).then(|| lines.join(" "))
    }
}

/// `U+202E (right-to-left override)` for the characters people meet, else the code point.
pub fn describe(c: char) -> String {
    let name = match c as u32 {
        0x00 => "null",
        0x09 => "tab",
        0x0D => "carriage return",
        0x1B => "escape",
        0x7F => "delete",
        0x00A0 => "no-break space",
        0x00AD => "soft hyphen",
        0x061C => "Arabic letter mark",
        0x200B => "zero width space",
        0x200C => "zero width non-joiner",
        0x200D => "zero width joiner",
        0x200E => "left-to-right mark",
        0x200F => "right-to-left mark",
        0x2028 => "line separator",
        0x2029 => "paragraph separator",
        0x202A => "left-to-right embedding",
        0x202B => "right-to-left embedding",
        0x202C => "pop directional formatting",
        0x202D => "left-to-right override",
        0x202E => "right-to-left override",
        0x2060 => "word joiner",
        0x2066 => "left-to-right isolate",
        0x2067 => "right-to-left isolate",
        0x2068 => "first strong isolate",
        0x2069 => "pop directional isolate",
        0xFEFF => "zero width no-break space",
        _ => return format!("U+{:04X}", c as u32),
    };
    format!("U+{:04X} ({name})", c as u32)
}

/// An argument list as a person reads it: each argument quoted, so spaces, empty arguments
/// and quotes inside are visible (`["rm", "-rf", "my dir"]`). Hidden characters are left for
/// [`reveal`] to escape.
pub fn quoted_argv(argv: &[String]) -> String {
    let quoted: Vec<String> = argv
        .iter()
        .map(|a| {
            let mut q = String::with_capacity(a.len() + 2);
            q.push('"');
            for c in a.chars() {
                match c {
                    '"' => q.push_str("\\\""),
                    '\\' => q.push_str("\\\\"),
                    '\n' => q.push_str("\\n"),
                    c => q.push(c),
                }
            }
            q.push('"');
            q
        })
        .collect();
    format!("[{}]", quoted.join(", "))
}

/// How many lines `text` draws as (a trailing line break adds none).
pub fn line_count(text: &str) -> usize {
    // The real gateway writes a command's line breaks as `\u{A}`.
    text.replace("\\u{A}", "\n").trim_end_matches('\n').lines().count().max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_right_to_left_override_and_a_zero_width_space_are_shown_as_escapes_and_named() {
        let r = reveal("ls \u{202E}txt.exe\u{200B} && echo ok");
        assert_eq!(
            r.pieces,
            vec![
                Piece::Text("ls ".into()),
                Piece::Escape('\u{202E}'),
                Piece::Text("txt.exe".into()),
                Piece::Escape('\u{200B}'),
                Piece::Text(" && echo ok".into())
            ]
        );
        let w = r.warning().unwrap();
        assert!(w.contains("change the direction"), "{w}");
        assert!(w.contains("U+202E (right-to-left override)") && w.contains("U+200B (zero width space)"), "{w}");
        assert_eq!(escape('\u{202E}'), "\\u{202E}");
    }

    #[test]
    fn the_gateways_own_escapes_are_named_as_the_characters_they_stand_for() {
        let r = reveal("echo \\u{202E}gnp.exe\\u{200B} done \\u{41} \\u{zz}");
        assert_eq!(r.hidden, vec!['\u{202E}', '\u{200B}']);
        assert_eq!(r.pieces[1], Piece::Escape('\u{202E}'));
        assert_eq!(r.pieces.last(), Some(&Piece::Text(" done \\u{41} \\u{zz}".into())), "other escapes stay text");
        assert!(r.warning().unwrap().contains("U+202E"));
    }

    #[test]
    fn plain_commands_with_tabs_and_line_breaks_hide_nothing() {
        let r = reveal("for f in *; do\n\techo \"$f\"\ndone");
        assert_eq!(r.pieces.len(), 1);
        assert_eq!(r.warning(), None);
    }

    #[test]
    fn control_characters_and_spaces_that_are_not_spaces_are_escaped() {
        let r = reveal("echo a\rrm -rf ~\u{1B}[2K\u{00A0}x\u{E0041}");
        assert_eq!(r.hidden, vec!['\r', '\u{1B}', '\u{00A0}', '\u{E0041}']);
        assert!(r.warning().unwrap().contains("look like a space"));
    }

    #[test]
    fn letters_outside_ascii_are_named_but_kept() {
        let r = reveal("curl https://аpple.com");
        assert_eq!(r.pieces, vec![Piece::Text("curl https://аpple.com".into())]);
        assert_eq!(r.lookalikes, vec!['а']);
        assert!(r.warning().unwrap().contains("а (U+0430)"));
    }

    #[test]
    fn an_argument_list_keeps_its_boundaries() {
        let argv = ["rm".to_string(), "-rf".into(), "my dir".into(), "".into(), "a\"b".into()];
        assert_eq!(quoted_argv(&argv), r#"["rm", "-rf", "my dir", "", "a\"b"]"#);
    }

    #[test]
    fn lines_are_counted_as_drawn() {
        assert_eq!(line_count("ls"), 1);
        assert_eq!(line_count("a\nb\nc\n"), 3);
        assert_eq!(line_count("a\\u{A}b\\u{A}c"), 3, "as the real gateway writes them");
        assert_eq!(reveal("a\\u{A}b").pieces, vec![Piece::Text("a\\u{A}\nb".into())]);
        assert_eq!(line_count(""), 1);
    }
}
