//! Record framing of z/OS variable-length data sets (SMF, GTF) as transferred in binary: each
//! record starts with a record descriptor word (RDW: a big-endian halfword length that counts
//! the RDW itself, then the segment descriptor), optionally grouped in blocks that start with a
//! block descriptor word (BDW). Walking the lengths is inherently sequential, so it lives here;
//! the fields are decoded in Python with vectorised gathers at the offsets this returns.

/// Records found in a buffer: start offsets, lengths (RDW value), segment descriptor bytes.
#[derive(Debug, Default, PartialEq)]
pub struct Frames {
    pub starts: Vec<i64>,
    pub lengths: Vec<i64>,
    pub segments: Vec<u8>,
    /// Bytes of the buffer fully framed (whole blocks with BDWs; whole records without).
    pub consumed: usize,
    /// (byte offset, field, reason): framing cannot go on past this point.
    pub error: Option<(usize, &'static str, String)>,
}

fn be16(d: &[u8], at: usize) -> usize {
    u16::from_be_bytes([d[at], d[at + 1]]) as usize
}

/// Frame `data` (which starts at a block or record boundary). `min_len`: the shortest record
/// that can be valid (its writer header). A record or block cut off by the end of `data` is
/// left unconsumed for the caller's next read.
pub fn frame(data: &[u8], with_bdw: bool, min_len: usize) -> Frames {
    let mut f = Frames::default();
    let mut at = 0usize;
    while at < data.len() {
        if with_bdw {
            if at + 4 > data.len() {
                break;
            }
            let raw = u32::from_be_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]]);
            // Large block interface: high bit set, 31-bit length; else a halfword and zeros.
            let blen = if raw & 0x8000_0000 != 0 {
                (raw & 0x7FFF_FFFF) as usize
            } else {
                if raw & 0xFFFF != 0 {
                    f.error = Some((at, "BDW", format!("low halfword X'{:04X}' is not zero", raw & 0xFFFF)));
                    break;
                }
                (raw >> 16) as usize
            };
            if blen < 8 {
                f.error = Some((
                    at,
                    "BDW",
                    format!("block length {blen} is shorter than a BDW and an RDW"),
                ));
                break;
            }
            if at + blen > data.len() {
                break; // the rest of the block is in the next read
            }
            let end = at + blen;
            let mut r = at + 4;
            let before = f.starts.len();
            while r < end {
                if r + 4 > end {
                    f.error = Some((
                        r,
                        "RDW",
                        format!("{} bytes left in the block, too few for an RDW", end - r),
                    ));
                    break;
                }
                let len = be16(data, r);
                if len < min_len.max(4) || r + len > end {
                    let why = if len < min_len.max(4) {
                        format!(
                            "record length {len} is shorter than the {}-byte writer header",
                            min_len.max(4)
                        )
                    } else {
                        format!("record length {len} runs past the block's end at byte {end}")
                    };
                    f.error = Some((r, "RDW", why));
                    break;
                }
                f.starts.push(r as i64);
                f.lengths.push(len as i64);
                f.segments.push(data[r + 2]);
                r += len;
            }
            if f.error.is_some() {
                // Nothing of a broken block is kept: its records are re-read (and reported) whole.
                f.starts.truncate(before);
                f.lengths.truncate(before);
                f.segments.truncate(before);
                break;
            }
            at = end;
            f.consumed = at;
        } else {
            if at + 4 > data.len() {
                break;
            }
            let len = be16(data, at);
            if len < min_len.max(4) {
                f.error = Some((
                    at,
                    "RDW",
                    format!(
                        "record length {len} is shorter than the {}-byte writer header",
                        min_len.max(4)
                    ),
                ));
                break;
            }
            if at + len > data.len() {
                break;
            }
            f.starts.push(at as i64);
            f.lengths.push(len as i64);
            f.segments.push(data[at + 2]);
            at += len;
            f.consumed = at;
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(len: usize, seg: u8) -> Vec<u8> {
        let mut r = vec![0u8; len];
        r[0..2].copy_from_slice(&(len as u16).to_be_bytes());
        r[2] = seg;
        r
    }

    #[test]
    fn records_without_blocks() {
        let mut d = rec(30, 0);
        d.extend(rec(40, 1));
        d.extend(&rec(50, 0)[..20]); // cut off: left for the next read
        let f = frame(&d, false, 28);
        assert_eq!(f.starts, vec![0, 30]);
        assert_eq!(f.lengths, vec![30, 40]);
        assert_eq!(f.segments, vec![0, 1]);
        assert_eq!(f.consumed, 70);
        assert!(f.error.is_none());
    }

    #[test]
    fn blocks_and_their_errors() {
        let mut block = vec![0u8, 0, 0, 0];
        block.extend(rec(30, 0));
        block.extend(rec(32, 0));
        let blen = block.len() as u16;
        block[0..2].copy_from_slice(&blen.to_be_bytes());
        let mut d = block.clone();
        d.extend(&block[..10]);
        let f = frame(&d, true, 28);
        assert_eq!(f.starts, vec![4, 34]);
        assert_eq!(f.consumed, 66);
        // An RDW that runs past its block.
        let mut bad = block.clone();
        bad[34..36].copy_from_slice(&40u16.to_be_bytes());
        let f = frame(&bad, true, 28);
        assert_eq!(f.starts, Vec::<i64>::new());
        assert_eq!(f.error.as_ref().map(|e| (e.0, e.1)), Some((34, "RDW")));
        // A record shorter than its header.
        let f = frame(&rec(10, 0), false, 28);
        assert_eq!(f.error.map(|e| (e.0, e.1)), Some((0, "RDW")));
    }
}
