//! Shared building blocks of every generator: the seeded random source,
//! deterministic ObjectIds and dates, skewed distributions and pseudo-text.
//!
//! Two kinds of randomness are used on purpose. A [`Gen`] (ChaCha8) is a
//! *stream*: documents are drawn from it one after another, so a collection
//! is reproducible only as a whole. [`Keyed`] is *random access*: a value for
//! item `i` is a pure function of `(key, i)`. Structural choices that another
//! collection must agree with (which post a comment belongs to, a product's
//! name and price, how many accounts a user follows) come from [`Keyed`], so
//! that references and counters line up without holding every document.

use bson::DateTime;
use bson::oid::ObjectId;
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::Scale;

/// Time zero of every dataset: 2026-01-01T00:00:00Z, in seconds.
pub const EPOCH_SECS: i64 = 1_767_225_600;

/// One day, in seconds.
pub const DAY: i64 = 86_400;

/// The splitmix64 finaliser: a cheap, well-mixed bijection of `u64`.
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a of a string: stable across runs and platforms, unlike `Hash`.
pub fn hash_str(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The root key of one generation run: (dataset name, scale, seed).
pub fn root_key(name: &str, scale: Scale, seed: u64) -> u64 {
    mix64(hash_str(name) ^ mix64(hash_str(scale.as_str()) ^ mix64(seed)))
}

/// Random-access randomness: `at(i, k)` is the `k`-th draw for item `i`.
#[derive(Debug, Clone, Copy)]
pub struct Keyed(u64);

impl Keyed {
    /// A keyed source for one purpose (`tag`) inside a run.
    pub fn new(root: u64, tag: &str) -> Self {
        Self(mix64(root ^ hash_str(tag)))
    }

    /// A uniform `u64` for item `i`, draw `k`.
    pub fn at(self, i: u64, k: u64) -> u64 {
        mix64(self.0 ^ mix64(i.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ k))
    }

    /// A uniform `f64` in [0, 1) for item `i`, draw `k`.
    pub fn unit(self, i: u64, k: u64) -> f64 {
        (self.at(i, k) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A uniform integer in [0, n) (0 when `n` is 0).
    pub fn below(self, i: u64, k: u64, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            ((u128::from(self.at(i, k)) * u128::from(n)) >> 64) as u64
        }
    }

    /// A stream generator private to item `i`, for items that other
    /// collections regenerate (a product inside an order line).
    pub fn gen_for(self, i: u64) -> Gen {
        Gen::from_key(self.at(i, 0xFFFF))
    }

    /// A deterministic ObjectId for item `i` created at `secs` (Unix time).
    ///
    /// Laid out like a real ObjectId: 4 bytes of timestamp, 5 bytes that
    /// are fixed per key (the "process" part), 3 bytes of counter. Items
    /// past 2^24 fold their high bits into the middle part, so ids stay
    /// unique for any count.
    pub fn oid(self, i: u64, secs: i64) -> ObjectId {
        let mut b = [0u8; 12];
        let ts = u32::try_from(secs.max(0)).unwrap_or(u32::MAX);
        b[0..4].copy_from_slice(&ts.to_be_bytes());
        let middle = mix64(self.0 ^ 0x0B1D) ^ (i >> 24);
        b[4..9].copy_from_slice(&middle.to_be_bytes()[3..8]);
        b[9..12].copy_from_slice(&(i as u32).to_be_bytes()[1..4]);
        ObjectId::from_bytes(b)
    }
}

/// A seeded stream of random draws (ChaCha8) with helpers for documents.
#[derive(Debug, Clone)]
pub struct Gen {
    rng: ChaCha8Rng,
}

impl Gen {
    /// A generator for one collection of a run.
    pub fn new(root: u64, tag: &str) -> Self {
        Self::from_key(mix64(root ^ hash_str(tag)))
    }

    fn from_key(key: u64) -> Self {
        let mut seed = [0u8; 32];
        for (n, chunk) in seed.chunks_mut(8).enumerate() {
            chunk.copy_from_slice(&mix64(key ^ n as u64).to_le_bytes());
        }
        Self {
            rng: ChaCha8Rng::from_seed(seed),
        }
    }

    pub fn u64(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        self.rng.random::<f64>()
    }

    /// Uniform integer in [0, n) (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.rng.random_range(0..n)
        }
    }

    /// Uniform integer in [lo, hi] (inclusive).
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            lo
        } else {
            self.rng.random_range(lo..=hi)
        }
    }

    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// A standard normal draw (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let u1 = self.unit().max(f64::MIN_POSITIVE);
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// Log-normal with the given median and log-scale sigma.
    pub fn lognormal(&mut self, median: f64, sigma: f64) -> f64 {
        median * (sigma * self.normal()).exp()
    }

    /// Exponential with the given mean.
    pub fn exp(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.unit()).ln()
    }

    /// Geometric count of failures before a success with probability `p`,
    /// i.e. mean (1-p)/p; small counts are common, large ones rare.
    pub fn geometric(&mut self, p: f64) -> u64 {
        let p = p.clamp(1e-9, 1.0);
        if p >= 1.0 {
            return 0;
        }
        ((1.0 - self.unit()).ln() / (1.0 - p).ln()).floor() as u64
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    /// Picks by integer weights.
    pub fn weighted<'a, T>(&mut self, items: &'a [(T, u32)]) -> &'a T {
        let total: u64 = items.iter().map(|(_, w)| u64::from(*w)).sum();
        let mut r = self.below(total);
        for (item, w) in items {
            if r < u64::from(*w) {
                return item;
            }
            r -= u64::from(*w);
        }
        &items[items.len() - 1].0
    }

    /// A pseudo-word of 1 to 4 syllables (mostly 2).
    pub fn word(&mut self) -> String {
        let mut w = String::with_capacity(12);
        self.push_word(&mut w);
        w
    }

    /// [`Gen::word`], appended to `out` (the same draws, no allocation).
    fn push_word(&mut self, out: &mut String) {
        let n = *self.weighted(&[(1usize, 3), (2, 5), (3, 3), (4, 1)]);
        for _ in 0..n {
            out.push_str(self.pick::<&str>(SYLLABLES));
        }
    }

    /// [`Gen::words`], appended to `out`.
    fn push_words(&mut self, out: &mut String, n: usize) {
        for k in 0..n {
            if k > 0 {
                out.push(' ');
            }
            self.push_word(out);
        }
    }

    /// [`Gen::sentence`], appended to `out`.
    fn push_sentence(&mut self, out: &mut String, lo: usize, hi: usize) {
        let n = self.range(lo as i64, hi as i64) as usize;
        let start = out.len();
        self.push_words(out, n.max(1));
        capitalise_from(out, start);
        out.push('.');
    }

    /// A capitalised pseudo-word, as a name part.
    pub fn name_part(&mut self) -> String {
        let n = *self.weighted(&[(2usize, 3), (3, 1)]);
        let mut w = String::new();
        for _ in 0..n {
            w.push_str(self.pick::<&str>(SYLLABLES));
        }
        capitalise(&w)
    }

    /// "Given Family".
    pub fn person_name(&mut self) -> String {
        format!("{} {}", self.name_part(), self.name_part())
    }

    /// `n` words separated by spaces.
    pub fn words(&mut self, n: usize) -> String {
        let mut s = String::with_capacity(n * 8);
        self.push_words(&mut s, n);
        s
    }

    /// `lo..=hi` words (uniform count) separated by spaces.
    pub fn words_between(&mut self, lo: i64, hi: i64) -> String {
        let n = self.range(lo, hi).max(1) as usize;
        self.words(n)
    }

    /// Sentences whose total length is log-normal around `median` chars.
    pub fn text_around(&mut self, median: f64, sigma: f64) -> String {
        let n = self.lognormal(median, sigma) as usize;
        self.text(n)
    }

    /// Paragraphs whose total length is log-normal around `median` chars.
    pub fn paragraphs_around(&mut self, median: f64, sigma: f64) -> String {
        let n = self.lognormal(median, sigma) as usize;
        self.paragraphs(n)
    }

    /// A sentence of `lo..=hi` words, capitalised, with a full stop.
    pub fn sentence(&mut self, lo: usize, hi: usize) -> String {
        let mut s = String::new();
        self.push_sentence(&mut s, lo, hi);
        s
    }

    /// About `chars` characters of sentences (never empty).
    pub fn text(&mut self, chars: usize) -> String {
        let mut s = String::with_capacity(chars + 128);
        self.push_sentence(&mut s, 4, 14);
        while s.len() < chars {
            s.push(' ');
            self.push_sentence(&mut s, 4, 14);
        }
        s
    }

    /// Paragraphs of about `chars` characters in all, 3–6 sentences each,
    /// separated by blank lines.
    pub fn paragraphs(&mut self, chars: usize) -> String {
        let mut s = String::with_capacity(chars.max(1) + 256);
        while s.len() < chars.max(1) {
            if !s.is_empty() {
                s.push_str("\n\n");
            }
            let n = self.range(3, 6);
            for k in 0..n {
                if k > 0 {
                    s.push(' ');
                }
                self.push_sentence(&mut s, 5, 16);
            }
        }
        s
    }
}

/// The syllables of every pseudo-word: open and closed, easy to read.
const SYLLABLES: &[&str] = &[
    "ba", "be", "bo", "da", "de", "di", "do", "fa", "fi", "ga", "go", "ha", "he", "ka", "ke", "ki",
    "ko", "la", "le", "li", "lo", "lu", "ma", "me", "mi", "mo", "na", "ne", "ni", "no", "pa", "pe",
    "po", "ra", "re", "ri", "ro", "sa", "se", "si", "so", "ta", "te", "ti", "to", "va", "ve", "vi",
    "za", "zo", "an", "el", "in", "or", "us", "ar", "en", "ol", "tran", "mor", "sel", "kin", "dor",
    "bel", "nar", "vin", "sta", "pri", "gro", "qua",
];

pub fn capitalise(s: &str) -> String {
    let mut out = s.to_owned();
    capitalise_from(&mut out, 0);
    out
}

/// Upper-case the first character of `s` from byte `start` on, in place
/// where it is ASCII (every syllable is).
fn capitalise_from(s: &mut String, start: usize) {
    match s[start..].chars().next() {
        Some(f) if f.is_ascii() => s[start..start + 1].make_ascii_uppercase(),
        Some(f) => {
            let rest: String = f
                .to_uppercase()
                .chain(s[start + f.len_utf8()..].chars())
                .collect();
            s.truncate(start);
            s.push_str(&rest);
        }
        None => {}
    }
}

/// A UTC date `secs` seconds after the Unix epoch.
pub fn date(secs: i64) -> DateTime {
    DateTime::from_millis(secs.saturating_mul(1000))
}

/// Rounds to `places` decimals, so values look like measured ones.
pub fn round(x: f64, places: i32) -> f64 {
    let f = 10f64.powi(places);
    (x * f).round() / f
}

/// Base-36 rendering of `n`, for short unique suffixes (handles, SKUs).
pub fn base36(mut n: u64) -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// A Zipf distribution over ranks `0..n`: rank r has weight 1/(r+1)^s.
///
/// Sampled by binary search in a cumulative table (8 bytes per rank), which
/// is exact and fast enough for the sizes here (at most a few million).
#[derive(Debug, Clone)]
pub struct Zipf {
    cumulative: Vec<f64>,
}

impl Zipf {
    pub fn new(n: u64, s: f64) -> Self {
        let mut cumulative = Vec::with_capacity(n as usize);
        let mut total = 0.0;
        for r in 0..n.max(1) {
            total += 1.0 / ((r + 1) as f64).powf(s);
            cumulative.push(total);
        }
        for c in &mut cumulative {
            *c /= total;
        }
        Self { cumulative }
    }

    /// The rank for a uniform draw `u` in [0, 1).
    pub fn rank(&self, u: f64) -> u64 {
        let r = self.cumulative.partition_point(|&c| c <= u);
        r.min(self.cumulative.len() - 1) as u64
    }
}

/// A fixed pseudo-random bijection of `0..n`, so that popular ranks are
/// spread over the collection instead of being its first items.
#[derive(Debug, Clone, Copy)]
pub struct Scatter {
    n: u64,
    stride: u64,
    offset: u64,
}

impl Scatter {
    pub fn new(n: u64, key: u64) -> Self {
        let n = n.max(1);
        let mut stride = (n as f64 * 0.618_033_988_7) as u64 | 1;
        while gcd(stride, n) != 1 {
            stride += 1;
        }
        Self {
            n,
            stride,
            offset: key % n,
        }
    }

    pub fn map(self, rank: u64) -> u64 {
        ((u128::from(rank) * u128::from(self.stride) + u128::from(self.offset))
            % u128::from(self.n)) as u64
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// An even spread of `n` items over `span` seconds from `start`, with each
/// item jittered inside its slot: item times increase with the index, like
/// ids assigned in insertion order.
pub fn spread(start: i64, span: i64, i: u64, n: u64, jitter: f64) -> i64 {
    let slot = span as f64 / n.max(1) as f64;
    start + (slot * (i as f64 + jitter.clamp(0.0, 0.999))) as i64
}
