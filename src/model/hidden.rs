//! Characters that change how text looks without being seen: zero-width characters and
//! the controls of bidirectional text. `ma<U+200B>in` reads as `main`, and a right-to-left
//! override turns the rest of a line around, so a name holding one can pass for another.
//! Names and paths refuse them; free text shows each one as a visible `<U+XXXX>`.

/// True for a character that is invisible or reorders the text around it.
pub fn is_hidden(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'               // soft hyphen
        | '\u{034F}'             // combining grapheme joiner
        | '\u{061C}'             // Arabic letter mark
        | '\u{115F}' | '\u{1160}' // Hangul fillers
        | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}' // Mongolian variation selectors and vowel separator
        | '\u{200B}'..='\u{200F}' // zero-width space, (non-)joiner, LRM, RLM
        | '\u{2028}' | '\u{2029}' // line and paragraph separators
        | '\u{202A}'..='\u{202E}' // bidi embeddings and overrides
        | '\u{2060}'..='\u{206F}' // word joiner, invisible operators, bidi isolates
        | '\u{3164}'             // Hangul filler
        | '\u{FE00}'..='\u{FE0F}' // variation selectors
        | '\u{FEFF}'             // zero-width no-break space
        | '\u{FFA0}'             // halfwidth Hangul filler
        | '\u{FFF9}'..='\u{FFFB}' // interlinear annotation
        | '\u{E0000}'..='\u{E007F}' // tags
    )
}

/// The first hidden character of `text`, if any.
pub fn first_hidden(text: &str) -> Option<char> {
    text.chars().find(|c| is_hidden(*c))
}

/// `text` with each hidden character written out as `<U+XXXX>`, so it is seen.
pub fn reveal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_hidden(c) {
            out.push_str(&format!("<U+{:04X}>", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_width_and_bidi_controls_are_hidden_and_revealed() {
        assert_eq!(first_hidden("ma\u{200B}in"), Some('\u{200B}'));
        assert_eq!(first_hidden("fix \u{202E}txt.exe"), Some('\u{202E}'));
        assert_eq!(first_hidden("\u{2066}x\u{2069}"), Some('\u{2066}'));
        assert_eq!(first_hidden("main"), None);
        assert_eq!(first_hidden("caf\u{e9} \u{65e5}\u{672c} \u{5d0}"), None);
        assert_eq!(reveal("ma\u{200B}in"), "ma<U+200B>in");
        assert_eq!(reveal("a\u{202E}b\u{FEFF}"), "a<U+202E>b<U+FEFF>");
    }
}
