//! The Avro binary body of a `poolsight.v1.GetpageBatch` (schemas/getpage_batch.v1.avsc) written
//! straight from columns: the producers' encoding without a Python list per column.
//!
//! The bytes are fastavro's `schemaless_writer`'s for the same record: fields in the v1 order,
//! zigzag varints, each array as one block (its count, its items, then 0; an empty array is just
//! 0), unions as the branch index. The caller checks that the schema it registers has exactly the
//! v1 layout (schemas/getpage_binary.py) and otherwise encodes with fastavro.

/// An int64 column's item, read one at a time (a plain slice, or a buffer shared with Python).
pub trait Int {
    fn value(&self) -> i64;
}

impl Int for i64 {
    #[inline]
    fn value(&self) -> i64 {
        *self
    }
}

/// A batch's columns, by the schema's field names.
pub struct Columns<'a, C> {
    pub source: &'a str,
    pub pool: &'a str,
    pub sequence: i64,
    pub start_time: i64,
    pub end_time: i64,
    pub object_names: &'a [&'a str],
    pub time_offset: &'a [C],
    pub object: &'a [C],
    pub partition: Option<&'a [C]>,
    pub page: &'a [C],
    pub access: &'a [u8],
    pub function: &'a [u8],
    pub hit: Option<&'a [u8]>,
}

/// Zigzag varint of a long (an int is the same bytes: Avro zigzags both as 64 bits).
#[inline]
pub fn long(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        out.push(z as u8 | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

fn bytes(out: &mut Vec<u8>, b: &[u8]) {
    long(out, b.len() as i64);
    out.extend_from_slice(b);
}

fn longs<C: Int>(out: &mut Vec<u8>, items: &[C]) {
    if !items.is_empty() {
        long(out, items.len() as i64);
        out.reserve(items.len() * 10);
        items.iter().for_each(|v| long(out, v.value()));
    }
    out.push(0);
}

/// An int array; a value outside the 32-bit range is refused (fastavro would write it, and every
/// reader would then refuse the record).
fn ints<C: Int>(out: &mut Vec<u8>, items: &[C], field: &str) -> Result<(), String> {
    if !items.is_empty() {
        long(out, items.len() as i64);
        out.reserve(items.len() * 5);
        for (i, v) in items.iter().enumerate() {
            let v = v.value();
            if i32::try_from(v).is_err() {
                return Err(format!(
                    "field {field}: value {v} at index {i} outside the Avro int (32-bit) range"
                ));
            }
            long(out, v);
        }
    }
    out.push(0);
    Ok(())
}

/// Append the body of `b` to `out`. Errors name the field (an int out of range); `out` then holds
/// a partial body.
pub fn encode<C: Int>(b: &Columns<'_, C>, out: &mut Vec<u8>) -> Result<(), String> {
    bytes(out, b.source.as_bytes());
    bytes(out, b.pool.as_bytes());
    long(out, b.sequence);
    long(out, b.start_time);
    long(out, b.end_time);
    if !b.object_names.is_empty() {
        long(out, b.object_names.len() as i64);
        b.object_names.iter().for_each(|s| bytes(out, s.as_bytes()));
    }
    out.push(0);
    ints(out, b.time_offset, "time_offset")?;
    ints(out, b.object, "object")?;
    match b.partition {
        None => out.push(0),
        Some(p) => {
            out.push(2); // branch 1, zigzagged
            ints(out, p, "partition")?;
        }
    }
    longs(out, b.page);
    bytes(out, b.access);
    bytes(out, b.function);
    match b.hit {
        None => out.push(0),
        Some(h) => {
            out.push(2);
            bytes(out, h);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::getpage_avro::tests::sample;
    use crate::getpage_avro::{decode, Batch};
    use crate::testutil::Rng;

    fn zz(v: i64) -> Vec<u8> {
        let mut out = Vec::new();
        long(&mut out, v);
        out
    }

    #[test]
    fn zigzag_varints_at_every_length_edge() {
        assert_eq!(zz(0), [0]);
        assert_eq!(zz(-1), [1]);
        assert_eq!(zz(1), [2]);
        assert_eq!(zz(-64), [0x7f]);
        assert_eq!(zz(63), [0x7e]);
        assert_eq!(zz(64), [0x80, 0x01]);
        assert_eq!(zz(-65), [0x81, 0x01]);
        assert_eq!(zz(i32::MAX as i64), [0xfe, 0xff, 0xff, 0xff, 0x0f]);
        assert_eq!(zz(i32::MIN as i64), [0xff, 0xff, 0xff, 0xff, 0x0f]);
        let mut max = vec![0xfe; 1];
        max.extend([0xff; 8]);
        max.push(0x01);
        assert_eq!(zz(i64::MAX), max);
        max[0] = 0xff;
        assert_eq!(zz(i64::MIN), max);
        // Each power of 2^7 of the zigzagged value adds a byte.
        for k in 1..=9u32 {
            let top = 1i64 << (7 * k - 1); // zigzags to 2^(7k)
            assert_eq!(zz(top - 1).len(), k as usize, "{k}");
            assert_eq!(zz(top).len(), k as usize + 1, "{k}");
            assert_eq!(zz(-top).len(), k as usize, "{k}");
            assert_eq!(zz(-top - 1).len(), k as usize + 1, "{k}");
        }
    }

    fn batch<'a>(b: &'a Batch<'a>) -> Columns<'a, i64> {
        Columns {
            source: b.source,
            pool: b.pool,
            sequence: b.sequence,
            start_time: b.start_time,
            end_time: b.end_time,
            object_names: &b.object_names,
            time_offset: &b.time_offset,
            object: &b.object,
            partition: b.partition.as_deref(),
            page: &b.page,
            access: b.access,
            function: b.function,
            hit: b.hit,
        }
    }

    #[test]
    fn the_decoder_reads_back_every_size() {
        let mut rng = Rng(11);
        let codes: Vec<u8> = (0..3000).map(|i| (i % 3) as u8).collect();
        for n in [0usize, 1, 2, 3, 7, 100, 999] {
            let b = sample(&mut rng, n, &codes);
            let mut out = vec![0, 0, 0, 0, 7];
            encode(&batch(&b), &mut out).unwrap();
            assert_eq!(decode(&out, 5).unwrap(), b, "n {n}");
        }
    }

    #[test]
    fn an_empty_batch_is_its_header_and_zeros() {
        let mut b = sample(&mut Rng(1), 0, &[]);
        b.object_names = vec![];
        let mut out = Vec::new();
        encode(&batch(&b), &mut out).unwrap();
        let mut want = vec![18];
        want.extend(b"DSNP/DB2A");
        want.push(16);
        want.extend("BP8K0 é".as_bytes());
        want.extend(zz(b.sequence));
        want.extend(zz(b.start_time));
        want.extend(zz(b.end_time));
        // names, time_offset, object; partition [] (branch 1, empty); page, access, function; hit null
        want.extend([0, 0, 0, 2, 0, 0, 0, 0, 0]);
        assert_eq!(out, want);
    }

    #[test]
    fn ints_outside_32_bits_are_refused_naming_the_field() {
        let codes = [0u8; 12];
        for (field, v) in [
            ("time_offset", i32::MAX as i64 + 1),
            ("object", i32::MIN as i64 - 1),
            ("partition", i64::MAX),
        ] {
            let mut b = sample(&mut Rng(2), 4, &codes);
            match field {
                "time_offset" => b.time_offset[2] = v,
                "object" => b.object[2] = v,
                _ => b.partition.as_mut().unwrap()[2] = v,
            }
            let err = encode(&batch(&b), &mut Vec::new()).unwrap_err();
            assert_eq!(
                err,
                format!("field {field}: value {v} at index 2 outside the Avro int (32-bit) range")
            );
        }
    }
}
