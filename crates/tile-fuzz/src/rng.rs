//! A small deterministic generator (SplitMix64): the same seed gives the
//! same programs on every machine.

/// SplitMix64 state.
pub struct Rng(u64);

impl Rng {
    /// The generator of case `case` under `seed`.
    /// Seed and case are each mixed first, so neighbouring cases start
    /// from unrelated states (never from shifted copies of one stream).
    pub fn new(seed: u64, case: u64) -> Rng {
        Rng(mix(seed.wrapping_add(0x9E37_79B9_7F4A_7C15)) ^ mix(!case))
    }

    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True with probability `1 / n`.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    /// One element of `items`.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// SplitMix64's finaliser.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
