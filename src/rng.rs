//! A small seeded random number generator and a Zipf sampler of our own, so
//! that `--seed` gives the same transactions on every platform and with every
//! version of every dependency. The one generator of the crate: `isolde
//! run`'s workload generator and simulated database use it, and so do the
//! test and benchmark generators (tests/, examples/).

/// xoshiro256** seeded through SplitMix64 (Blackman and Vigna).
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator whose whole stream is fixed by `seed`.
    pub fn new(seed: u64) -> Rng {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        Rng {
            s: [next(), next(), next(), next()],
        }
    }

    /// An independent generator derived from this one (for sub-streams).
    pub fn fork(&mut self) -> Rng {
        Rng::new(self.next_u64())
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in `[0, n)`; `n` must be positive. (Lemire's multiply-shift;
    /// the bias is below 2^-32 for every n we use.)
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
}

/// A probability distribution over `[0, n)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dist {
    /// Every value equally likely.
    Uniform,
    /// P(i) ∝ 1/(i+1)^theta.
    Zipf(f64),
}

impl std::str::FromStr for Dist {
    type Err = String;
    /// `uniform` or `zipf:THETA` (`zipf` alone means theta 1).
    fn from_str(s: &str) -> Result<Dist, String> {
        if s == "uniform" {
            return Ok(Dist::Uniform);
        }
        if s == "zipf" {
            return Ok(Dist::Zipf(1.0));
        }
        if let Some(t) = s.strip_prefix("zipf:") {
            let theta: f64 = t
                .parse()
                .map_err(|_| format!("bad zipf exponent {t:?}: expected a number"))?;
            if !(theta.is_finite() && theta >= 0.0) {
                return Err(format!("zipf exponent must be >= 0, got {theta}"));
            }
            return Ok(Dist::Zipf(theta));
        }
        Err(format!(
            "unknown distribution {s:?}: expected uniform or zipf:THETA"
        ))
    }
}

/// Draws from a [`Dist`] over `[0, n)`.
#[derive(Clone, Debug)]
pub enum Sampler {
    /// Uniform over `[0, n)`.
    Uniform(u64),
    /// Zipf over `[0, n)`.
    Zipf(Zipf),
}

impl Sampler {
    /// A sampler of `dist` over `[0, n)` (`n` of 0 is taken as 1).
    pub fn new(dist: Dist, n: u64) -> Sampler {
        match dist {
            Dist::Uniform => Sampler::Uniform(n.max(1)),
            Dist::Zipf(theta) => Sampler::Zipf(Zipf::new(n.max(1), theta)),
        }
    }

    /// One draw.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        match self {
            Sampler::Uniform(n) => rng.below(*n),
            Sampler::Zipf(z) => z.sample(rng),
        }
    }
}

/// Zipf over `[0, n)` by rejection-inversion (Hörmann and Derflinger, 1996):
/// constant memory and expected constant time for any `n`.
#[derive(Clone, Debug)]
pub struct Zipf {
    n: f64,
    exponent: f64,
    h_integral_x1: f64,
    h_integral_n: f64,
    s: f64,
}

impl Zipf {
    /// Zipf over `[0, n)` with P(i) ∝ 1/(i+1)^exponent.
    pub fn new(n: u64, exponent: f64) -> Zipf {
        let mut z = Zipf {
            n: n.max(1) as f64,
            exponent,
            h_integral_x1: 0.0,
            h_integral_n: 0.0,
            s: 0.0,
        };
        z.h_integral_x1 = z.h_integral(1.5) - 1.0;
        z.h_integral_n = z.h_integral(z.n + 0.5);
        z.s = 2.0 - z.h_integral_inverse(z.h_integral(2.5) - z.h(2.0));
        z
    }

    /// A value in `[0, n)`; 0 is the most likely.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_integral_n + rng.unit() * (self.h_integral_x1 - self.h_integral_n);
            let x = self.h_integral_inverse(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.s || u >= self.h_integral(k + 0.5) - self.h(k) {
                return k as u64 - 1;
            }
        }
    }

    /// The density's antiderivative: (x^(1-e) - 1) / (1-e), or ln x at e = 1.
    fn h_integral(&self, x: f64) -> f64 {
        let log_x = x.ln();
        helper2((1.0 - self.exponent) * log_x) * log_x
    }

    fn h(&self, x: f64) -> f64 {
        (-self.exponent * x.ln()).exp()
    }

    fn h_integral_inverse(&self, x: f64) -> f64 {
        let mut t = x * (1.0 - self.exponent);
        if t < -1.0 {
            // Rounding can push t just below -1; clamp as the method requires.
            t = -1.0;
        }
        (helper1(t) * x).exp()
    }
}

/// ln(1+x)/x, accurate near 0.
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// (e^x - 1)/x, accurate near 0.
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x))
    }
}
