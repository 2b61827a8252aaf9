//! CRC of a concatenation from the CRCs of its pieces and their lengths,
//! without the data: how a FULL_OBJECT multipart checksum is computed from
//! the part checksums.
//!
//! All three S3 CRCs (CRC-32, CRC-32C, CRC-64/NVME) are reflected, with
//! all-ones initial value and final XOR. For such a CRC,
//! `crc(A ‖ B) = crc(A) · x^(8·len(B)) mod P  ⊕  crc(B)`: the conditioning
//! terms cancel. Multiplication is carry-less, modulo the polynomial, in
//! the reflected bit order (the top bit stands for x^0); x^(8n) is built by
//! square-and-multiply, so the cost is logarithmic in the length.

use crate::checksum::ChecksumAlgorithm;

/// A reflected CRC: its width and its bit-reversed polynomial.
#[derive(Clone, Copy, Debug)]
pub struct Crc {
    width: u32,
    reversed_poly: u64,
}

impl Crc {
    pub const CRC32: Self = Self {
        width: 32,
        reversed_poly: 0xEDB8_8320,
    };
    pub const CRC32C: Self = Self {
        width: 32,
        reversed_poly: 0x82F6_3B78,
    };
    pub const CRC64NVME: Self = Self {
        width: 64,
        reversed_poly: 0x9A6C_9329_AC4B_C9B5,
    };

    /// The CRC for an algorithm, if it is one.
    pub fn for_algorithm(alg: ChecksumAlgorithm) -> Option<Self> {
        match alg {
            ChecksumAlgorithm::Crc32 => Some(Self::CRC32),
            ChecksumAlgorithm::Crc32c => Some(Self::CRC32C),
            ChecksumAlgorithm::Crc64Nvme => Some(Self::CRC64NVME),
            ChecksumAlgorithm::Sha1 | ChecksumAlgorithm::Sha256 => None,
        }
    }

    /// Width in bytes of the big-endian value S3 base64-encodes.
    pub fn bytes(self) -> usize {
        self.width as usize / 8
    }

    /// The polynomial 1 (x^0) in reflected order.
    fn one(self) -> u64 {
        1 << (self.width - 1)
    }

    /// a · b mod P.
    fn multiply(self, a: u64, mut b: u64) -> u64 {
        let mut product = 0;
        let mut bit = self.one();
        while bit != 0 {
            if a & bit != 0 {
                product ^= b;
            }
            // b · x: one step towards the low-order end, reduced.
            b = if b & 1 != 0 {
                (b >> 1) ^ self.reversed_poly
            } else {
                b >> 1
            };
            bit >>= 1;
        }
        product
    }

    /// x^(8·bytes) mod P.
    fn shift_for(self, mut bytes: u64) -> u64 {
        let mut result = self.one();
        // x^8 is the reflected bit 8 places below x^0.
        let mut square = self.one() >> 8;
        while bytes != 0 {
            if bytes & 1 != 0 {
                result = self.multiply(square, result);
            }
            square = self.multiply(square, square);
            bytes >>= 1;
        }
        result
    }

    /// The CRC of A ‖ B from crc(A), crc(B) and len(B).
    pub fn combine(self, crc_a: u64, crc_b: u64, len_b: u64) -> u64 {
        self.multiply(self.shift_for(len_b), crc_a) ^ crc_b
    }

    /// Reads the big-endian raw value S3 sends (base64-decoded).
    pub fn decode(self, raw: &[u8]) -> Option<u64> {
        (raw.len() == self.bytes())
            .then(|| raw.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
    }

    pub fn encode(self, value: u64) -> Vec<u8> {
        value.to_be_bytes()[8 - self.bytes()..].to_vec()
    }
}

#[cfg(test)]
mod tests {
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD as BASE64;

    use super::*;
    use crate::checksum::AlgorithmHeader;

    fn raw_crc(alg: ChecksumAlgorithm, crc: Crc, data: &[u8]) -> u64 {
        let raw = BASE64.decode(alg.digest(data)).unwrap();
        crc.decode(&raw).unwrap()
    }

    fn data(len: usize, seed: u32) -> Vec<u8> {
        (0..len as u32)
            .map(|i| (i.wrapping_mul(2_654_435_761).wrapping_add(seed) >> 13) as u8)
            .collect()
    }

    #[test]
    fn combined_equals_crc_of_the_concatenation() {
        for alg in [
            ChecksumAlgorithm::Crc32,
            ChecksumAlgorithm::Crc32c,
            ChecksumAlgorithm::Crc64Nvme,
        ] {
            let crc = Crc::for_algorithm(alg).unwrap();
            // Lengths include 0, 1 and sizes that are not powers of two.
            let pieces: Vec<Vec<u8>> = [0, 1, 7, 4096, 100_003, 0, 65_536]
                .iter()
                .enumerate()
                .map(|(i, &len)| data(len, i as u32))
                .collect();
            let mut combined = raw_crc(alg, crc, &pieces[0]);
            for piece in &pieces[1..] {
                combined = crc.combine(combined, raw_crc(alg, crc, piece), piece.len() as u64);
            }
            assert_eq!(combined, raw_crc(alg, crc, &pieces.concat()), "{alg:?}");
        }
    }

    #[test]
    fn big_endian_round_trip_keeps_the_width() {
        let crc = Crc::CRC32;
        assert_eq!(crc.encode(0xCBF4_3926), [0xCB, 0xF4, 0x39, 0x26]);
        assert_eq!(crc.decode(&[0xCB, 0xF4, 0x39, 0x26]), Some(0xCBF4_3926));
        assert_eq!(crc.decode(&[1, 2, 3]), None);
    }
}
