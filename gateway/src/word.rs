//! Words: text of bounded length over a set of ASCII characters, declared
//! once and from that declaration both checked and written as a
//! JSON-Schema pattern (settings such as `region`, the fields of a key).

/// Some ASCII characters, as inclusive ranges: both the check of a value and
/// its JSON-Schema pattern come from this one declaration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chars(pub &'static [(u8, u8)]);

impl Chars {
    pub fn contains(self, b: u8) -> bool {
        self.0.iter().any(|&(low, high)| (low..=high).contains(&b))
    }

    /// The regular-expression class, `[0-9A-Z]`; other than letters and
    /// digits in hex, which every regex dialect (Go's, ECMA's, Python's)
    /// reads alike.
    fn class(self) -> String {
        let char = |b: u8| {
            if b.is_ascii_alphanumeric() {
                char::from(b).to_string()
            } else {
                format!("\\x{b:02x}")
            }
        };
        let mut class = String::from("[");
        for &(low, high) in self.0 {
            class.push_str(&char(low));
            if high != low {
                class.push('-');
                class.push_str(&char(high));
            }
        }
        class.push(']');
        class
    }
}

/// Text of `min` (at least 1) to `max` characters (`None`: any number),
/// the first of `first`, the others of `chars`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Word {
    pub min: usize,
    pub max: Option<usize>,
    pub first: Chars,
    pub chars: Chars,
}

impl Word {
    pub fn accepts(self, text: &str) -> bool {
        let length_ok = text.len() >= self.min && self.max.is_none_or(|max| text.len() <= max);
        length_ok
            && text.bytes().enumerate().all(|(i, b)| {
                if i == 0 {
                    self.first.contains(b)
                } else {
                    self.chars.contains(b)
                }
            })
    }

    /// The JSON-Schema pattern of the same words. Every character is
    /// ASCII, so the pattern's characters are [`Self::accepts`]'s bytes.
    pub fn pattern(self) -> String {
        let rest_min = self.min - 1;
        let rest = match self.max {
            Some(max) => format!("{{{rest_min},{}}}", max - 1),
            None => format!("{{{rest_min},}}"),
        };
        format!("^{}{}{rest}$", self.first.class(), self.chars.class())
    }
}
