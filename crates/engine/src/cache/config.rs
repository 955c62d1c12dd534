//! The cache's size, set as mongod sets WiredTiger's: a default from the
//! machine's memory (50% of RAM less 1 GB, at least 256 MB),
//! `--wiredTigerCacheSizeGB` at start, and a WiredTiger configuration
//! string (`cache_size=64M`) at run time through `setParameter`'s
//! `wiredTigerEngineRuntimeConfig`.

const MB: u64 = 1024 * 1024;
const GB: u64 = 1024 * MB;

/// WiredTiger's smallest `cache_size`: 1 MB.
pub const MIN_CACHE_SIZE: u64 = MB;
/// WiredTiger's largest `cache_size`: 10 TB.
pub const MAX_CACHE_SIZE: u64 = 10 * 1024 * GB;

/// Why a cache size was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CacheConfigError {
    /// WiredTiger refuses the configuration string (EINVAL), as mongod
    /// reports it.
    #[error("WiredTiger reconfiguration failed with error code (22): Invalid argument")]
    Invalid,
    /// `--wiredTigerCacheSizeGB` outside mongod's range.
    #[error("wiredTigerCacheSizeGB must be between 0.25 and 10000, got {0}")]
    OutOfRange(String),
}

/// mongod's default cache size for a machine with `ram` bytes: the larger
/// of 50% of (RAM − 1 GB) and 256 MB.
pub fn default_cache_size(ram: u64) -> u64 {
    (ram.saturating_sub(GB) / 2).max(256 * MB)
}

/// This machine's memory, from `/proc/meminfo` (`None` where it cannot be
/// read).
pub fn machine_ram() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

/// The default cache size on this machine (256 MB when its memory is not
/// known), computed once.
pub fn machine_default() -> u64 {
    static SIZE: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *SIZE.get_or_init(|| default_cache_size(machine_ram().unwrap_or(0)))
}

/// `--wiredTigerCacheSizeGB`: gigabytes (fractions allowed) in mongod's
/// range 0.25–10000.
pub fn size_from_gb(gb: f64) -> Result<u64, CacheConfigError> {
    if !(0.25..=10_000.0).contains(&gb) {
        return Err(CacheConfigError::OutOfRange(gb.to_string()));
    }
    Ok((gb * GB as f64) as u64)
}

/// A WiredTiger size value: a number with an optional suffix B, K/KB,
/// M/MB, G/GB or T/TB (case-insensitive, powers of 1024).
pub fn parse_size(s: &str) -> Result<u64, CacheConfigError> {
    let s = s.trim();
    let digits = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (n, suffix) = s.split_at(digits);
    let n: u64 = n.parse().map_err(|_| CacheConfigError::Invalid)?;
    let unit = match suffix.to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" => 1024,
        "M" | "MB" => MB,
        "G" | "GB" => GB,
        "T" | "TB" => 1024 * GB,
        _ => return Err(CacheConfigError::Invalid),
    };
    n.checked_mul(unit).ok_or(CacheConfigError::Invalid)
}

/// The `cache_size` a WiredTiger runtime configuration string sets, if
/// any. The string is a comma-separated list of `key=value` (values may
/// be parenthesised groups); keys other than `cache_size` are accepted and
/// not modelled. A malformed string, or a `cache_size` that is not a size
/// between 1 MB and 10 TB, is refused as WiredTiger refuses it.
pub fn parse_runtime_config(config: &str) -> Result<Option<u64>, CacheConfigError> {
    let mut size = None;
    for item in split_top_level(config)? {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        let (key, value) = item.split_once('=').unwrap_or((item, ""));
        if key.trim() == "cache_size" {
            let n = parse_size(value)?;
            if !(MIN_CACHE_SIZE..=MAX_CACHE_SIZE).contains(&n) {
                return Err(CacheConfigError::Invalid);
            }
            size = Some(n);
        }
    }
    Ok(size)
}

/// Split at commas outside parentheses and quotes.
fn split_top_level(s: &str) -> Result<Vec<&str>, CacheConfigError> {
    let mut out = Vec::new();
    let (mut depth, mut start, mut quoted) = (0usize, 0usize, false);
    for (i, c) in s.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '(' | '[' if !quoted => depth += 1,
            ')' | ']' if !quoted => {
                depth = depth.checked_sub(1).ok_or(CacheConfigError::Invalid)?;
            }
            ',' if !quoted && depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 || quoted {
        return Err(CacheConfigError::Invalid);
    }
    out.push(&s[start..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_follows_mongods_rule() {
        assert_eq!(default_cache_size(16 * GB), 15 * GB / 2);
        assert_eq!(default_cache_size(GB + 200 * MB), 256 * MB);
        assert_eq!(default_cache_size(0), 256 * MB);
    }

    #[test]
    fn sizes_take_wiredtiger_suffixes() {
        assert_eq!(parse_size("64M"), Ok(64 * MB));
        assert_eq!(parse_size("2gb"), Ok(2 * GB));
        assert_eq!(parse_size("512k"), Ok(512 * 1024));
        assert_eq!(parse_size("100"), Ok(100));
        assert!(parse_size("64X").is_err());
        assert!(parse_size("M").is_err());
    }

    #[test]
    fn runtime_configs_set_cache_size_only_when_valid() {
        assert_eq!(parse_runtime_config("cache_size=64M"), Ok(Some(64 * MB)));
        assert_eq!(
            parse_runtime_config("eviction=(threads_min=4,threads_max=8),cache_size=1G"),
            Ok(Some(GB))
        );
        assert_eq!(parse_runtime_config("eviction=(threads_min=4)"), Ok(None));
        assert_eq!(
            parse_runtime_config("cache_size=10K"),
            Err(CacheConfigError::Invalid)
        );
        assert_eq!(
            parse_runtime_config("cache_size=(1"),
            Err(CacheConfigError::Invalid)
        );
        assert!(size_from_gb(0.1).is_err());
        assert_eq!(size_from_gb(0.5), Ok(GB / 2));
    }
}
