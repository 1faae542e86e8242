//! `stored_text_enum!`: the one way an enum gets its stored text form.
//!
//! Each variant is written to SQLite, JSON and the command line as one fixed word; this
//! macro gives the enum `ALL`, `as_str`, `parse`, `Display` and `FromStr` from a single
//! list, so the words are spelled in one place.

/// The text given to `FromStr` was none of the enum's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind} {text:?}: expected one of {}", expected.join(", "))]
pub struct UnknownWord {
    pub kind: &'static str,
    pub text: String,
    pub expected: &'static [&'static str],
}

#[macro_export]
#[doc(hidden)]
macro_rules! stored_text_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident as $kind:literal {
            $( $(#[$variant_meta:meta])* $variant:ident => $text:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
        $vis enum $name {
            $( $(#[$variant_meta])* #[serde(rename = $text)] $variant ),+
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[ $( $name::$variant ),+ ];

            /// The stored word.
            pub fn as_str(self) -> &'static str {
                match self { $( $name::$variant => $text ),+ }
            }

            /// The variant whose stored word is `text`.
            pub fn parse(text: &str) -> Option<Self> {
                match text { $( $text => Some($name::$variant), )+ _ => None }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = $crate::stored_text::UnknownWord;

            fn from_str(text: &str) -> Result<Self, Self::Err> {
                $name::parse(text.trim()).ok_or_else(|| $crate::stored_text::UnknownWord {
                    kind: $kind,
                    text: text.to_owned(),
                    expected: &[ $( $text ),+ ],
                })
            }
        }
    };
}
