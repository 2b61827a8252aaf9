//! The operation mix of the `mixed` mode. The weights are warp's defaults
//! (GET 45, HEAD 30, PUT 15, DELETE 10), so results compare with warp runs.

/// One kind of object operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Get,
    Head,
    Put,
    Delete,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::Get => "GET",
            Op::Head => "HEAD",
            Op::Put => "PUT",
            Op::Delete => "DELETE",
        }
    }
}

/// Weights in percent; they add up to 100.
pub const WARP_MIX: [(Op, u32); 4] = [
    (Op::Get, 45),
    (Op::Head, 30),
    (Op::Put, 15),
    (Op::Delete, 10),
];

/// Maps a roll in `0..100` onto the mix: the first operation whose
/// cumulative weight exceeds the roll. Rolls past the end give the last one.
pub fn pick(roll: u32) -> Op {
    let mut cumulative = 0;
    for (op, weight) in WARP_MIX {
        cumulative += weight;
        if roll < cumulative {
            return op;
        }
    }
    WARP_MIX[WARP_MIX.len() - 1].0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_add_up_to_one_hundred() {
        assert_eq!(WARP_MIX.iter().map(|(_, weight)| weight).sum::<u32>(), 100);
    }

    #[test]
    fn rolls_map_onto_the_boundaries() {
        assert_eq!(pick(0), Op::Get);
        assert_eq!(pick(44), Op::Get);
        assert_eq!(pick(45), Op::Head);
        assert_eq!(pick(74), Op::Head);
        assert_eq!(pick(75), Op::Put);
        assert_eq!(pick(89), Op::Put);
        assert_eq!(pick(90), Op::Delete);
        assert_eq!(pick(99), Op::Delete);
    }

    #[test]
    fn every_roll_gives_the_warp_proportions() {
        let mut counts = [0u32; 4];
        for roll in 0..100 {
            let index = WARP_MIX
                .iter()
                .position(|(op, _)| *op == pick(roll))
                .expect("picked op is in the mix");
            counts[index] += 1;
        }
        assert_eq!(counts, [45, 30, 15, 10]);
    }
}
