//! What a model's tokens cost: a table of dollars per million tokens for each model and
//! kind of token, with defaults for the current models and the owner's own entries on
//! top. A model that is not in the table has no price: its tokens are shown with "price
//! unknown", never as $0.
//!
//! A model is found by its name as the provider reports it; a name that is a table
//! entry followed by a date (`claude-sonnet-4-5-20250929`, `gpt-5-2025-08-07`) is that
//! entry. Any other variant is unknown rather than priced as a guess.
//!
//! Where the defaults come from (neither provider's price page can be reached from the
//! machine that checked them): Anthropic's are the model catalog inside Claude Code
//! 2.1.332, the program the tests run (its `pricing` tiers: input, output, five-minute
//! cache write, cache read); OpenAI's are stored copies of OpenAI's price page. OpenAI
//! models that no copy lists (the GPT-6 family Codex 0.163.0 offers) have no default.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The day the default prices were last compared with the providers' price pages.
pub const DEFAULT_PRICES_CHECKED: &str = "2026-12-01";

/// Tokens of one model call, by kind, as the provider counted them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUsage {
    /// Input tokens billed at the full input price (Anthropic's `input_tokens`;
    /// OpenAI's input tokens less the cached ones).
    pub input: u64,
    /// Input tokens written to the prompt cache (Anthropic's cache creation).
    pub cache_write: u64,
    /// Of `cache_write`, the tokens written to be kept for an hour (Anthropic's
    /// `ephemeral_1h_input_tokens`), which cost twice the input price rather than the
    /// five-minute write's price.
    #[serde(default)]
    pub cache_write_hour: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read: u64,
    /// Output tokens, reasoning included.
    pub output: u64,
    /// Of the output, the tokens the model spent reasoning (shown, not billed apart).
    pub reasoning: u64,
}

impl TokenUsage {
    /// Every input token, whatever its price.
    pub fn all_input(&self) -> u64 {
        self.input + self.cache_write + self.cache_read
    }

    /// Input and output together.
    pub fn total(&self) -> u64 {
        self.all_input() + self.output
    }

    pub fn add(&mut self, other: &TokenUsage) {
        self.input += other.input;
        self.cache_write += other.cache_write;
        self.cache_write_hour += other.cache_write_hour;
        self.cache_read += other.cache_read;
        self.output += other.output;
        self.reasoning += other.reasoning;
    }
}

/// Dollars per million tokens of one model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ModelPrice {
    pub input: f64,
    pub output: f64,
    pub cache_write: f64,
    pub cache_read: f64,
}

impl ModelPrice {
    /// What `usage` costs at this price, in dollars.
    pub fn cost_of(&self, usage: &TokenUsage) -> f64 {
        let per_token = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
        let hour = usage.cache_write_hour.min(usage.cache_write);
        per_token(usage.input, self.input)
            + per_token(usage.cache_write - hour, self.cache_write)
            + per_token(hour, self.cache_write_hour())
            + per_token(usage.cache_read, self.cache_read)
            + per_token(usage.output, self.output)
    }

    /// Dollars per million tokens written to the cache for an hour: twice the input
    /// price, as Anthropic bills it (never less than a five-minute write).
    pub fn cache_write_hour(&self) -> f64 {
        (self.input * 2.0).max(self.cache_write)
    }
}

/// A table entry that does not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("price line {line:?} does not read: {reason}")]
pub struct PriceLineError {
    pub line: String,
    pub reason: String,
}

/// Models and their prices: the defaults, with the owner's entries replacing them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PriceTable {
    pub models: BTreeMap<String, ModelPrice>,
}

/// Anthropic's prices: input, output, cache read; a five-minute cache write costs 1.25
/// times the input.
fn anthropic(input: f64, output: f64, cache_read: f64) -> ModelPrice {
    ModelPrice {
        input,
        output,
        cache_write: input * 1.25,
        cache_read,
    }
}

/// OpenAI's prices: input, cached input, output (the cache is written for free).
fn openai(input: f64, cached: f64, output: f64) -> ModelPrice {
    ModelPrice {
        input,
        output,
        cache_write: input,
        cache_read: cached,
    }
}

impl Default for PriceTable {
    /// The providers' list prices, as of [`DEFAULT_PRICES_CHECKED`].
    fn default() -> Self {
        let models = [
            ("claude-3-5-haiku", anthropic(0.8, 4.0, 0.08)),
            ("claude-haiku-4-5", anthropic(1.0, 5.0, 0.1)),
            ("claude-haiku-5-5", anthropic(0.1, 0.5, 0.01)),
            ("claude-3-5-sonnet", anthropic(3.0, 15.0, 0.3)),
            ("claude-3-7-sonnet", anthropic(3.0, 15.0, 0.3)),
            ("claude-sonnet-4", anthropic(3.0, 15.0, 0.3)),
            ("claude-sonnet-4-0", anthropic(3.0, 15.0, 0.3)),
            ("claude-sonnet-4-5", anthropic(3.0, 15.0, 0.3)),
            ("claude-sonnet-4-6", anthropic(3.0, 15.0, 0.3)),
            ("claude-sonnet-5", anthropic(2.0, 10.0, 0.2)),
            ("claude-sonnet-5-5", anthropic(2.0, 10.0, 0.1)),
            ("claude-opus-4", anthropic(15.0, 75.0, 1.5)),
            ("claude-opus-4-0", anthropic(15.0, 75.0, 1.5)),
            ("claude-opus-4-1", anthropic(15.0, 75.0, 1.5)),
            ("claude-opus-4-5", anthropic(5.0, 25.0, 0.5)),
            ("claude-opus-4-6", anthropic(5.0, 25.0, 0.5)),
            ("claude-opus-4-7", anthropic(5.0, 25.0, 0.5)),
            ("claude-opus-4-8", anthropic(5.0, 25.0, 0.5)),
            ("claude-opus-5", anthropic(5.0, 25.0, 0.5)),
            ("claude-opus-5-5", anthropic(4.0, 20.0, 0.2)),
            ("claude-fable-5", anthropic(10.0, 50.0, 1.0)),
            ("claude-fable-5-1", anthropic(10.0, 50.0, 0.25)),
            ("claude-fable-5-2", anthropic(8.0, 40.0, 0.2)),
            ("claude-mythos-5", anthropic(10.0, 50.0, 1.0)),
            ("claude-mythos-5-1", anthropic(10.0, 50.0, 0.25)),
            ("claude-mythos-5-2", anthropic(8.0, 40.0, 0.2)),
            ("gpt-5.5", openai(5.0, 0.5, 30.0)),
            ("gpt-5.4", openai(2.5, 0.25, 15.0)),
            ("gpt-5.3-codex", openai(1.75, 0.175, 14.0)),
            ("gpt-5.2-codex", openai(1.75, 0.175, 14.0)),
            ("gpt-5.2", openai(1.75, 0.175, 14.0)),
            ("gpt-5.1-codex-max", openai(1.25, 0.125, 10.0)),
            ("gpt-5.1-codex", openai(1.25, 0.125, 10.0)),
            ("gpt-5.1", openai(1.25, 0.125, 10.0)),
            ("gpt-5-codex", openai(1.25, 0.125, 10.0)),
            ("gpt-5", openai(1.25, 0.125, 10.0)),
            ("gpt-5-mini", openai(0.25, 0.025, 2.0)),
            ("gpt-5-nano", openai(0.05, 0.005, 0.4)),
            ("gpt-4.1", openai(2.0, 0.5, 8.0)),
            ("gpt-4.1-mini", openai(0.4, 0.1, 1.6)),
            ("gpt-4o", openai(2.5, 1.25, 10.0)),
            ("gpt-4o-mini", openai(0.15, 0.075, 0.6)),
            ("o3", openai(2.0, 0.5, 8.0)),
            ("o4-mini", openai(1.1, 0.275, 4.4)),
        ]
        .into_iter()
        .map(|(name, price)| (name.to_owned(), price))
        .collect();
        PriceTable { models }
    }
}

/// Whether `rest` is a release date after a model's name: `-20250929` or `-2025-08-07`.
fn is_date_suffix(rest: &str) -> bool {
    let Some(date) = rest.strip_prefix('-') else {
        return false;
    };
    let digits = date.chars().filter(char::is_ascii_digit).count();
    digits == 8 && date.chars().all(|c| c.is_ascii_digit() || c == '-')
}

impl PriceTable {
    /// The defaults with the owner's `overrides` on top (see [`PriceTable::parse_lines`]).
    pub fn with_overrides(overrides: Option<&str>) -> Result<PriceTable, PriceLineError> {
        let mut table = PriceTable::default();
        if let Some(text) = overrides {
            table.models.extend(PriceTable::parse_lines(text)?);
        }
        Ok(table)
    }

    /// The owner's entries: one per line or `;`-separated, each
    /// `MODEL INPUT OUTPUT [CACHE_WRITE CACHE_READ]` in dollars per million tokens
    /// (without the cache prices, a cache write costs the input price and a read a
    /// tenth of it).
    pub fn parse_lines(text: &str) -> Result<BTreeMap<String, ModelPrice>, PriceLineError> {
        let mut models = BTreeMap::new();
        for line in text.split([';', '\n']).map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let refuse = |reason: &str| PriceLineError {
                line: line.to_owned(),
                reason: reason.to_owned(),
            };
            let parts: Vec<&str> = line.split_whitespace().collect();
            let (name, numbers) = parts.split_first().ok_or_else(|| refuse("empty"))?;
            let numbers: Vec<f64> = numbers
                .iter()
                .map(|number| number.trim_start_matches('$').parse::<f64>())
                .collect::<Result<_, _>>()
                .map_err(|_| refuse("prices are numbers of dollars per million tokens"))?;
            if numbers
                .iter()
                .any(|price| !price.is_finite() || *price < 0.0)
            {
                return Err(refuse("a price cannot be negative"));
            }
            let price =
                match numbers[..] {
                    [input, output] => ModelPrice {
                        input,
                        output,
                        cache_write: input,
                        cache_read: input / 10.0,
                    },
                    [input, output, cache_write, cache_read] => ModelPrice {
                        input,
                        output,
                        cache_write,
                        cache_read,
                    },
                    _ => return Err(refuse(
                        "write MODEL INPUT OUTPUT, or MODEL INPUT OUTPUT CACHE_WRITE CACHE_READ",
                    )),
                };
            models.insert((*name).to_owned(), price);
        }
        Ok(models)
    }

    /// The dearest price of each kind of token in the table: what a budget counts the
    /// tokens of a model with no price as, so that a cap holds for any model.
    pub fn dearest(&self) -> ModelPrice {
        let most =
            |kind: fn(&ModelPrice) -> f64| self.models.values().map(kind).fold(0.0_f64, f64::max);
        ModelPrice {
            input: most(|price| price.input),
            output: most(|price| price.output),
            cache_write: most(|price| price.cache_write),
            cache_read: most(|price| price.cache_read),
        }
    }

    /// The most output tokens `model` may write in one answer, when a request does not
    /// say: the providers' published ceilings, by family (Claude Opus 4 and 4.1: 32,000;
    /// Claude 3.5 Haiku: 8,192; other Claude models: 64,000; OpenAI's and any other
    /// model: 128,000).
    pub fn output_ceiling(model: &str) -> u64 {
        let model = model.to_ascii_lowercase();
        if model.starts_with("claude-opus-4-0")
            || model.starts_with("claude-opus-4-1")
            || model == "claude-opus-4"
            || model.starts_with("claude-opus-4-2025")
        {
            32_000
        } else if model.starts_with("claude-3-5-haiku") {
            8_192
        } else if model.starts_with("claude-") {
            64_000
        } else {
            128_000
        }
    }

    /// The price a call of `model` is reserved at: the table's price, or the dearest
    /// when the model has none (`true` then).
    pub fn reservation_price(&self, model: &str) -> (ModelPrice, bool) {
        match self.price_of(model) {
            Some(price) => (*price, false),
            None => (self.dearest(), true),
        }
    }

    /// The price of `model`, if the table has it.
    pub fn price_of(&self, model: &str) -> Option<&ModelPrice> {
        if let Some(price) = self.models.get(model) {
            return Some(price);
        }
        self.models
            .iter()
            .filter(|(name, _)| {
                model
                    .strip_prefix(name.as_str())
                    .is_some_and(is_date_suffix)
            })
            .max_by_key(|(name, _)| name.len())
            .map(|(_, price)| price)
    }

    /// What `usage` of `model` costs; `None` when the model has no price.
    pub fn cost_of(&self, model: &str, usage: &TokenUsage) -> Option<f64> {
        self.price_of(model).map(|price| price.cost_of(usage))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dated_model_name_takes_its_models_price() {
        let table = PriceTable::default();
        assert_eq!(
            table.price_of("claude-sonnet-4-5-20250929"),
            table.price_of("claude-sonnet-4-5")
        );
        assert_eq!(table.price_of("gpt-5-2025-08-07"), table.price_of("gpt-5"));
        assert_eq!(
            table
                .price_of("claude-opus-4-20250514")
                .map(|price| price.input),
            Some(15.0)
        );
    }

    #[test]
    fn an_unknown_variant_has_no_price_rather_than_a_guess() {
        let table = PriceTable::default();
        assert!(table.price_of("gpt-5.9").is_none());
        assert!(table.price_of("gpt-5-turbo-preview").is_none());
        assert!(table.price_of("claude-stand-in").is_none());
        assert_eq!(
            table.cost_of("my-local-model", &TokenUsage::default()),
            None
        );
    }

    #[test]
    fn each_kind_of_token_is_priced_apart() {
        let usage = TokenUsage {
            input: 1_000_000,
            cache_write: 1_000_000,
            cache_write_hour: 0,
            cache_read: 1_000_000,
            output: 1_000_000,
            reasoning: 500_000,
        };
        let sonnet = PriceTable::default().cost_of("claude-sonnet-4-5", &usage);
        assert_eq!(sonnet, Some(3.0 + 3.75 + 0.3 + 15.0));
    }

    #[test]
    fn the_owners_entries_replace_and_extend_the_defaults() {
        let table =
            PriceTable::with_overrides(Some("claude-sonnet-4-5 2 10; my-model 1 2 1.5 0.1\n"))
                .unwrap();
        assert_eq!(table.price_of("claude-sonnet-4-5").unwrap().input, 2.0);
        assert_eq!(table.price_of("my-model").unwrap().cache_write, 1.5);
        assert!(table.price_of("gpt-5").is_some());
    }

    #[test]
    fn a_price_line_that_does_not_read_is_refused_with_the_line() {
        for bad in ["gpt-5 cheap 10", "gpt-5 1", "gpt-5 -1 2", "gpt-5 1 2 3"] {
            let error = PriceTable::parse_lines(bad).unwrap_err();
            assert_eq!(error.line, bad);
        }
    }
}
