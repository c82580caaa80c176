//! Finding a secret value in a text in any form an encoder may give it: literal, JSON escapes, HTML
//! character references, percent-encoding, and each of those escaped once more.
//!
//! Each character of the secret may stand in the text as itself or as one of its encodings, chosen
//! independently of its neighbours (encoders differ in what they escape). An encoding is a short
//! pattern (`\u` and four hex digits, `&#` and a number, `%` and two hex digits, ...) whose own
//! punctuation may again be encoded one level down (`\\u0026`: a JSON string inside a JSON string),
//! down to [`MAX_DEPTH`]. The search backtracks over these alternatives, remembering where the rest
//! of a secret cannot match where the ways part, so a text costs at most its length times the
//! secret's length squared (each branching tried once per secret character, then one way on to the
//! next branching); and it forgets
//! what lies behind the position it searches from (no later search looks back), so its memory is
//! what one occurrence's reach holds, not the text's length times the secret's.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use super::PARTIAL_MIN;

/// How many encodings deep a character may sit: 2 covers a form escaped once more.
const MAX_DEPTH: u8 = 2;

/// `text` with every occurrence of each secret replaced by [`REDACTED`](super::REDACTED); `None`
/// when there is none.
/// `secrets` come longest first, so a secret that contains another is replaced whole.
pub(super) fn replace_all(text: &str, secrets: &[Box<[char]>]) -> Option<String> {
    let starts = StartBytes::new(secrets);
    let bytes = text.as_bytes();
    let mut searches: Vec<Search<'_>> = secrets
        .iter()
        .map(|secret| Search::new(bytes, secret))
        .collect();
    let mut spans = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        let found = if starts.may_start(bytes[pos]) {
            searches.iter_mut().find_map(|search| search.at(pos))
        } else {
            None
        };
        // An occurrence starts with a character's first byte or an ASCII escape, never inside a
        // character, so every `pos` it is found at (and every end) is a character boundary.
        match found {
            Some(end) => {
                spans.push((pos, end));
                pos = end;
            }
            None => pos += 1,
        }
    }
    (!spans.is_empty()).then(|| super::splice(text, &spans))
}

/// The bytes at which an occurrence may begin: the first byte of a secret's first character, or the
/// first byte of an encoding.
pub(super) struct StartBytes([bool; 256]);

impl StartBytes {
    pub(super) fn new(secrets: &[Box<[char]>]) -> Self {
        let mut table = [false; 256];
        for byte in [b'\\', b'&', b'%', b'+'] {
            table[usize::from(byte)] = true;
        }
        for secret in secrets {
            if let Some(first) = secret.first() {
                let mut buf = [0; 4];
                table[usize::from(first.encode_utf8(&mut buf).as_bytes()[0])] = true;
            }
        }
        Self(table)
    }

    pub(super) fn may_start(&self, byte: u8) -> bool {
        self.0[usize::from(byte)]
    }
}

/// Which character is written at a position of a text, in any form a [`Search`] knows (to find a
/// URI's separators however they are escaped).
pub(super) struct Written<'t>(Search<'t>);

impl<'t> Written<'t> {
    pub(super) fn new(text: &'t [u8]) -> Self {
        let mut search = Search::new(text, &[]);
        search.units = Some(RefCell::default());
        Self(search)
    }

    /// Where `c` ends when it is written at `pos`, its longest form first; `None` when it is not.
    /// Several characters asked for at one position share the work.
    pub(super) fn char_at(&self, pos: usize, c: char) -> Option<usize> {
        if let Some(units) = &self.0.units {
            let mut units = units.borrow_mut();
            if units.at != pos {
                units.at = pos;
                units.ends.clear();
            }
        }
        self.0.unit(pos, c, 0).complete.first().copied()
    }

    /// How many answers it holds now.
    #[cfg(test)]
    pub(super) fn remembered(&self) -> usize {
        self.0
            .units
            .as_ref()
            .map_or(0, |units| units.borrow().ends.len())
    }
}

/// Where a form (of a character, or the rest of an encoding pattern) that begins at a position
/// ends: each end of a whole form, longest first, and whether the text runs out inside one (`\u00`,
/// `&#x`, `%C3`, `&eac`, a surrogate pair's first half, the replacement character that cut UTF-8
/// leaves). One grammar gives both, so a cut form is exactly a whole form's beginning.
#[derive(Clone, Default)]
struct Ends {
    complete: Vec<usize>,
    cut: bool,
}

impl Ends {
    /// Takes in `other`'s ends and cut.
    fn merge(&mut self, other: Ends) {
        for end in other.complete {
            if !self.complete.contains(&end) {
                self.complete.push(end);
            }
        }
        self.cut |= other.cut;
    }
}

/// One piece of an encoding pattern.
#[derive(Clone, Copy)]
enum Token {
    /// This character, itself possibly encoded one level down.
    Char(char),
    /// A hexadecimal digit of this value, in either case.
    Hex(u8),
    /// A number in this radix (10 or 16), with any leading zeros, digits in either case.
    Number(u32, u32),
    /// An optional `;`.
    OptionalSemicolon,
}

/// Whether `byte` may begin a form of a character other than the character itself.
fn is_escape(byte: u8) -> bool {
    matches!(byte, b'\\' | b'&' | b'%' | b'+')
}

/// The ways of writing `c` other than itself.
fn encodings(c: char) -> Vec<Vec<Token>> {
    use Token::{Char, Hex, Number, OptionalSemicolon};
    let mut forms = Vec::with_capacity(8);
    // JSON: the short escapes, and `\uXXXX` per UTF-16 unit.
    let short = match c {
        '"' => Some('"'),
        '\\' => Some('\\'),
        '/' => Some('/'),
        '\u{8}' => Some('b'),
        '\u{c}' => Some('f'),
        '\n' => Some('n'),
        '\r' => Some('r'),
        '\t' => Some('t'),
        _ => None,
    };
    if let Some(short) = short {
        forms.push(vec![Char('\\'), Char(short)]);
    }
    let mut units = [0u16; 2];
    let mut json = Vec::with_capacity(12);
    for unit in c.encode_utf16(&mut units).iter() {
        json.extend([Char('\\'), Char('u')]);
        json.extend((0..4).rev().map(|i| Hex(((unit >> (4 * i)) & 0xf) as u8)));
    }
    forms.push(json);
    // HTML: numeric references, decimal and hexadecimal, and the named ones.
    let code = u32::from(c);
    forms.push(vec![
        Char('&'),
        Char('#'),
        Number(code, 10),
        OptionalSemicolon,
    ]);
    for x in ['x', 'X'] {
        forms.push(vec![
            Char('&'),
            Char('#'),
            Char(x),
            Number(code, 16),
            OptionalSemicolon,
        ]);
    }
    for name in html_names(c) {
        let mut form = vec![Char('&')];
        form.extend(name.chars().map(Char));
        form.push(OptionalSemicolon);
        forms.push(form);
    }
    // Percent-encoded UTF-8, and `+` for a space (forms and query strings).
    let mut buf = [0; 4];
    let mut percent = Vec::with_capacity(12);
    for byte in c.encode_utf8(&mut buf).bytes() {
        percent.extend([Char('%'), Hex(byte >> 4), Hex(byte & 0xf)]);
    }
    forms.push(percent);
    if c == ' ' {
        forms.push(vec![Char('+')]);
    }
    forms
}

/// The HTML named character references of `c`, without `&` and `;`: every name HTML's table (the
/// WHATWG's, generated into [`html_entities`](super::html_entities)) gives the one character `c`.
/// An error page may write any of them.
fn html_names(c: char) -> impl Iterator<Item = &'static str> {
    let table = super::html_entities::names();
    let start = table.partition_point(|(named, _)| *named < c);
    table[start..]
        .iter()
        .take_while(move |(named, _)| *named == c)
        .map(|(_, name)| *name)
}

/// The search for one secret in one text, whole or from one of its characters on (a tail, see
/// `remainders.rs`). A failure to match the rest of the secret from a position does not depend on
/// where the occurrence began, so failures where encodings branch are remembered across start
/// positions: each branching is tried once per secret character. Only whether a match may stop
/// at the text's end depends on it (a tail must have [`PARTIAL_MIN`] characters of its own): a
/// failure is kept with the first character the search began at, and holds for a search begun at
/// it or later. A search from a position never reads behind it, so failures behind the latest
/// start are forgotten.
pub(super) struct Search<'t> {
    text: &'t [u8],
    secret: &'t [char],
    /// The index of the secret's character the current search began at.
    from: usize,
    /// `(position, index of the secret's character)` from which the rest cannot match, at or after
    /// the latest start, with the smallest `from` it failed under.
    failed: BTreeMap<(usize, usize), usize>,
    /// The encodings of each character met so far.
    forms: RefCell<HashMap<char, Rc<[Vec<Token>]>>>,
    /// For [`Written`], which asks for many characters at one position: the ends of each
    /// `(position, character, depth)` met since the question moved to its current position.
    units: Option<RefCell<Units>>,
}

/// The ends [`Search::unit`] found since the questions moved to `at`.
#[derive(Default)]
struct Units {
    at: usize,
    ends: HashMap<(usize, char, u8), Ends>,
}

impl<'t> Search<'t> {
    pub(super) fn new(text: &'t [u8], secret: &'t [char]) -> Self {
        Self {
            text,
            secret,
            from: 0,
            failed: BTreeMap::new(),
            forms: RefCell::default(),
            units: None,
        }
    }

    /// How many failures the search remembers now.
    #[cfg(test)]
    pub(super) fn remembered(&self) -> usize {
        self.failed.len()
    }

    /// Where the secret ends when it begins at `pos`: the whole of it, or a prefix of at least
    /// [`PARTIAL_MIN`] whole characters that runs to the end of the text, maybe ending inside the
    /// form of the next one (a body cut at a read bound inside an escape: `hunter\u00`).
    pub(super) fn at(&mut self, pos: usize) -> Option<usize> {
        self.tail_at(pos, 0)
    }

    /// Where the secret's tail from its character `from` on ends when it begins at `pos`, as
    /// [`at`](Self::at) finds the whole secret (a prefix of the tail counts from [`PARTIAL_MIN`]
    /// of the tail's characters).
    pub(super) fn tail_at(&mut self, pos: usize, from: usize) -> Option<usize> {
        if self
            .failed
            .first_key_value()
            .is_some_and(|((behind, _), _)| *behind < pos)
        {
            // Nothing searched from `pos` or later reads behind it.
            self.failed = self.failed.split_off(&(pos, 0));
        }
        self.from = from;
        self.rest(pos, from)
    }

    fn rest(&mut self, pos: usize, index: usize) -> Option<usize> {
        if index == self.secret.len() {
            return Some(pos);
        }
        let partial = index - self.from >= PARTIAL_MIN;
        if pos == self.text.len() {
            return partial.then_some(pos);
        }
        let c = self.secret[index];
        if !is_escape(self.text[pos]) {
            // No form begins here, only the character itself: one way on, nothing to remember (the
            // failures worth keeping are where the ways part).
            let mut buf = [0; 4];
            let literal = c.encode_utf8(&mut buf).as_bytes();
            if self.text[pos..].starts_with(literal)
                && let Some(found) = self.rest(pos + literal.len(), index + 1)
            {
                return Some(found);
            }
            // Or the text ends inside this character (the replacement character of cut UTF-8).
            return (partial && self.unit(pos, c, 0).cut).then_some(self.text.len());
        }
        if self
            .failed
            .get(&(pos, index))
            .is_some_and(|from| *from <= self.from)
        {
            return None;
        }
        let ends = self.unit(pos, c, 0);
        for end in ends.complete {
            if let Some(found) = self.rest(end, index + 1) {
                return Some(found);
            }
        }
        if partial && ends.cut {
            return Some(self.text.len());
        }
        let from = self.from;
        self.failed
            .entry((pos, index))
            .and_modify(|failed| *failed = (*failed).min(from))
            .or_insert(from);
        None
    }

    /// The encodings of `c`, worked out once per search.
    fn forms_of(&self, c: char) -> Rc<[Vec<Token>]> {
        Rc::clone(
            self.forms
                .borrow_mut()
                .entry(c)
                .or_insert_with(|| encodings(c).into()),
        )
    }

    /// Where `c` ends when it begins at `pos`, written at encoding depth `depth`: the longest first,
    /// so that a match takes an optional `;` with it.
    fn unit(&self, pos: usize, c: char, depth: u8) -> Ends {
        let Some(units) = &self.units else {
            return self.unit_anew(pos, c, depth);
        };
        if let Some(ends) = units.borrow().ends.get(&(pos, c, depth)) {
            return ends.clone();
        }
        let ends = self.unit_anew(pos, c, depth);
        units
            .borrow_mut()
            .ends
            .insert((pos, c, depth), ends.clone());
        ends
    }

    fn unit_anew(&self, pos: usize, c: char, depth: u8) -> Ends {
        let mut ends = Ends::default();
        let Some(rest) = self.text.get(pos..).filter(|rest| !rest.is_empty()) else {
            return ends;
        };
        let mut buf = [0; 4];
        let literal = c.encode_utf8(&mut buf).as_bytes();
        if rest.starts_with(literal) {
            ends.complete.push(pos + literal.len());
        }
        // What reading cut UTF-8 lossily leaves of a character beyond ASCII.
        ends.cut =
            !c.is_ascii() && c != char::REPLACEMENT_CHARACTER && rest == "\u{fffd}".as_bytes();
        if depth < MAX_DEPTH && is_escape(rest[0]) {
            let forms = self.forms_of(c);
            for form in forms.iter() {
                ends.merge(self.pattern(pos, form, depth + 1));
            }
        }
        ends.complete.sort_unstable_by(|a, b| b.cmp(a));
        ends
    }

    /// Where `tokens` end when they begin at `pos`, and whether the text runs out inside them: at
    /// its end while a token other than an optional `;` is still to come, or inside one.
    fn pattern(&self, pos: usize, tokens: &[Token], depth: u8) -> Ends {
        let Some((token, rest)) = tokens.split_first() else {
            return Ends {
                complete: vec![pos],
                cut: false,
            };
        };
        if pos == self.text.len() {
            let optional = |token: &Token| matches!(token, Token::OptionalSemicolon);
            return Ends {
                complete: if tokens.iter().all(optional) {
                    vec![pos]
                } else {
                    Vec::new()
                },
                cut: !tokens.iter().all(optional),
            };
        }
        let (heads, cut) = match *token {
            Token::Char(c) => {
                let ends = self.unit(pos, c, depth);
                (ends.complete, ends.cut)
            }
            Token::Hex(value) => (self.hex_digit(pos, value).into_iter().collect(), false),
            Token::Number(value, radix) => {
                // The text may end among the digits (after any zeros).
                let zeros = self.text[pos..].iter().take_while(|b| **b == b'0').count();
                let digits = Self::digits(value, radix);
                let left = &self.text[pos + zeros..];
                let inside = left.len() < digits.len()
                    && left.eq_ignore_ascii_case(&digits.as_bytes()[..left.len()]);
                (self.number(pos, value, radix).into_iter().collect(), inside)
            }
            Token::OptionalSemicolon => {
                let mut heads = vec![pos];
                if self.text.get(pos) == Some(&b';') {
                    heads.push(pos + 1);
                }
                (heads, false)
            }
        };
        let mut ends = Ends {
            complete: Vec::new(),
            cut,
        };
        for head in heads {
            ends.merge(self.pattern(head, rest, depth));
        }
        ends
    }

    fn hex_digit(&self, pos: usize, value: u8) -> Option<usize> {
        let byte = *self.text.get(pos)?;
        let digit = char::from(byte).to_digit(16)?;
        (digit == u32::from(value)).then_some(pos + 1)
    }

    /// The digits of `value` in `radix` (10 or 16, lower case).
    fn digits(value: u32, radix: u32) -> String {
        if radix == 16 {
            format!("{value:x}")
        } else {
            value.to_string()
        }
    }

    /// `value` in `radix` with any leading zeros; digits in either case.
    fn number(&self, pos: usize, value: u32, radix: u32) -> Option<usize> {
        let mut at = pos;
        while self.text.get(at) == Some(&b'0') {
            at += 1;
        }
        let digits = Self::digits(value, radix);
        if value == 0 {
            return (at > pos).then_some(at);
        }
        let candidate = self.text.get(at..at + digits.len())?;
        candidate
            .eq_ignore_ascii_case(digits.as_bytes())
            .then_some(at + digits.len())
    }
}
