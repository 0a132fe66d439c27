//! The Avro binary body of a `poolsight.v1.GetpageBatch` (schemas/getpage_batch.v1.avsc) straight
//! into columns: the simulation job's decoding without a Python object per getpage.
//!
//! Only the v1 field layout is read here, in the schema's order; the caller checks that the
//! writer's schema has exactly that layout (schemas/getpage_binary.py) and otherwise decodes
//! with fastavro. Errors name the field and the byte where its value starts.

use std::fmt::Display;

/// A decoded batch; strings and byte columns borrow from the record.
#[derive(Debug, PartialEq)]
pub struct Batch<'a> {
    pub source: &'a str,
    pub pool: &'a str,
    pub sequence: i64,
    pub start_time: i64,
    pub end_time: i64,
    pub object_names: Vec<&'a str>,
    pub time_offset: Vec<i64>,
    pub object: Vec<i64>,
    pub partition: Option<Vec<i64>>,
    pub page: Vec<i64>,
    pub access: &'a [u8],
    pub function: &'a [u8],
    pub hit: Option<&'a [u8]>,
}

#[derive(Debug, PartialEq)]
pub enum Error {
    /// Not a GetpageBatch v1 body: the record is undecodable.
    Malformed(String),
    /// Decoded, but its columns disagree (GetpageBatch.from_record's checks): the record is unusable.
    Unusable(String),
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    field: &'static str,
}

impl<'a> Reader<'a> {
    fn err(&self, at: usize, what: impl Display) -> Error {
        Error::Malformed(format!("field {}: {what} at byte {at}", self.field))
    }

    fn left(&self) -> usize {
        self.data.len() - self.pos
    }

    /// A zigzag varint of at most 10 bytes that fits 64 bits.
    #[inline]
    fn long(&mut self) -> Result<i64, Error> {
        let start = self.pos;
        let mut v: u64 = 0;
        let mut shift = 0u32;
        loop {
            let Some(&b) = self.data.get(self.pos) else {
                return Err(self.err(start, "varint runs past the end"));
            };
            self.pos += 1;
            if shift == 63 && b > 1 {
                let what = if b & 0x80 != 0 {
                    "varint longer than 10 bytes"
                } else {
                    "varint overflows 64 bits"
                };
                return Err(self.err(start, what));
            }
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok((v >> 1) as i64 ^ -((v & 1) as i64));
            }
            shift += 7;
        }
    }

    #[inline]
    fn int(&mut self) -> Result<i64, Error> {
        let start = self.pos;
        let v = self.long()?;
        if i32::try_from(v).is_err() {
            return Err(self.err(start, format_args!("int {v} outside the 32-bit range")));
        }
        Ok(v)
    }

    fn bytes(&mut self) -> Result<&'a [u8], Error> {
        let start = self.pos;
        let n = self.long()?;
        if n < 0 {
            return Err(self.err(start, format_args!("negative length {n}")));
        }
        if n as u64 > self.left() as u64 {
            return Err(self.err(
                start,
                format_args!("length {n} runs past the end ({} bytes left)", self.left()),
            ));
        }
        let out = &self.data[self.pos..self.pos + n as usize];
        self.pos += n as usize;
        Ok(out)
    }

    fn string(&mut self) -> Result<&'a str, Error> {
        let start = self.pos;
        let b = self.bytes()?;
        std::str::from_utf8(b).map_err(|e| self.err(start, format_args!("invalid UTF-8 ({e})")))
    }

    /// Array blocks: a count, 0 ends; a negative count is |count| items after a byte size.
    fn array<T>(&mut self, mut item: impl FnMut(&mut Self) -> Result<T, Error>) -> Result<Vec<T>, Error> {
        let mut out = Vec::new();
        loop {
            let start = self.pos;
            let count = self.long()?;
            if count == 0 {
                return Ok(out);
            }
            if count < 0 {
                let at = self.pos;
                let size = self.long()?;
                if size < 0 {
                    return Err(self.err(at, format_args!("negative block size {size}")));
                }
            }
            // Every item takes a byte at least: a larger count is a lie, and must not reserve memory.
            let n = count.unsigned_abs();
            if n > self.left() as u64 {
                return Err(self.err(
                    start,
                    format_args!("block of {n} items runs past the end ({} bytes left)", self.left()),
                ));
            }
            out.reserve(n as usize);
            for _ in 0..n {
                out.push(item(self)?);
            }
        }
    }

    /// A union [null, X]: whether X follows.
    fn present(&mut self) -> Result<bool, Error> {
        let start = self.pos;
        match self.long()? {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(self.err(start, format_args!("union branch {b}, not 0 (null) or 1"))),
        }
    }

    fn at(&mut self, field: &'static str) -> &mut Self {
        self.field = field;
        self
    }
}

/// Decode `data[start..]`, exactly one record; byte positions in errors count from `data[0]`.
pub fn decode(data: &[u8], start: usize) -> Result<Batch<'_>, Error> {
    if start > data.len() {
        return Err(Error::Malformed(format!(
            "body starts at byte {start}, past the end ({})",
            data.len()
        )));
    }
    let mut r = Reader {
        data,
        pos: start,
        field: "source",
    };
    let b = Batch {
        source: r.at("source").string()?,
        pool: r.at("pool").string()?,
        sequence: r.at("sequence").long()?,
        start_time: r.at("start_time").long()?,
        end_time: r.at("end_time").long()?,
        object_names: r.at("object_names").array(Reader::string)?,
        time_offset: r.at("time_offset").array(Reader::int)?,
        object: r.at("object").array(Reader::int)?,
        partition: if r.at("partition").present()? {
            Some(r.array(Reader::int)?)
        } else {
            None
        },
        page: r.at("page").array(Reader::long)?,
        access: r.at("access").bytes()?,
        function: r.at("function").bytes()?,
        hit: if r.at("hit").present()? { Some(r.bytes()?) } else { None },
    };
    if r.pos != data.len() {
        return Err(Error::Malformed(format!(
            "after field hit: {} trailing bytes at byte {}",
            r.left(),
            r.pos
        )));
    }
    Ok(b)
}

/// GetpageBatch.from_record's checks, with its messages; returns the getpages (function 0).
pub fn check(b: &Batch<'_>) -> Result<u64, Error> {
    let n = b.time_offset.len();
    for (name, len) in [
        ("object", b.object.len()),
        ("page", b.page.len()),
        ("access", b.access.len()),
        ("function", b.function.len()),
        ("hit", b.hit.map_or(n, <[u8]>::len)),
        ("partition", b.partition.as_ref().map_or(n, Vec::len)),
    ] {
        if len != n {
            return Err(Error::Unusable(format!("field {name}: {len} entries for {n} events")));
        }
    }
    let names = b.object_names.len() as i64;
    if b.object.iter().any(|&o| o < 0 || o >= names) {
        return Err(Error::Unusable(format!(
            "field object: index outside object_names ({names} names)"
        )));
    }
    Ok(b.function.iter().filter(|&&f| f == 0).count() as u64)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::testutil::Rng;

    fn long(out: &mut Vec<u8>, v: i64) {
        let mut z = ((v << 1) ^ (v >> 63)) as u64;
        while z >= 0x80 {
            out.push((z as u8) | 0x80);
            z >>= 7;
        }
        out.push(z as u8);
    }

    fn bytes(out: &mut Vec<u8>, b: &[u8]) {
        long(out, b.len() as i64);
        out.extend_from_slice(b);
    }

    /// Items in blocks of `block` (negative-count blocks with their byte size when `sized`).
    fn array(out: &mut Vec<u8>, items: &[i64], block: usize, sized: bool) {
        for chunk in items.chunks(block.max(1)) {
            let mut body = Vec::new();
            chunk.iter().for_each(|&v| long(&mut body, v));
            if sized {
                long(out, -(chunk.len() as i64));
                long(out, body.len() as i64);
            } else {
                long(out, chunk.len() as i64);
            }
            out.extend_from_slice(&body);
        }
        long(out, 0);
    }

    fn encode(b: &Batch<'_>, block: usize, sized: bool) -> Vec<u8> {
        let mut out = Vec::new();
        bytes(&mut out, b.source.as_bytes());
        bytes(&mut out, b.pool.as_bytes());
        for v in [b.sequence, b.start_time, b.end_time] {
            long(&mut out, v);
        }
        if !b.object_names.is_empty() {
            long(&mut out, b.object_names.len() as i64);
            b.object_names.iter().for_each(|s| bytes(&mut out, s.as_bytes()));
        }
        long(&mut out, 0);
        array(&mut out, &b.time_offset, block, sized);
        array(&mut out, &b.object, block, sized);
        match &b.partition {
            None => long(&mut out, 0),
            Some(p) => {
                long(&mut out, 1);
                array(&mut out, p, block, sized);
            }
        }
        array(&mut out, &b.page, block, sized);
        bytes(&mut out, b.access);
        bytes(&mut out, b.function);
        match b.hit {
            None => long(&mut out, 0),
            Some(h) => {
                long(&mut out, 1);
                bytes(&mut out, h);
            }
        }
        out
    }

    /// A batch of n events with edge values (the encoder's tests use it too).
    pub(crate) fn sample<'a>(rng: &mut Rng, n: usize, codes: &'a [u8]) -> Batch<'a> {
        let edge = [0, -1, 1, i64::MIN, i64::MAX, i32::MIN as i64, i32::MAX as i64];
        Batch {
            source: "DSNP/DB2A",
            pool: "BP8K0 é",
            sequence: i64::MAX,
            start_time: i64::MIN,
            end_time: -1,
            object_names: vec!["DB1.TS1", "DB1.IX1", "Ünïcode"],
            time_offset: (0..n).map(|i| [0, i32::MIN as i64, i32::MAX as i64][i % 3]).collect(),
            object: (0..n).map(|_| rng.below(3) as i64).collect(),
            partition: n
                .is_multiple_of(2)
                .then(|| (0..n).map(|_| rng.below(4096) as i64).collect()),
            page: (0..n)
                .map(|i| if i < edge.len() { edge[i] } else { rng.next() as i64 })
                .collect(),
            access: &codes[..n],
            function: &codes[n..2 * n],
            hit: (!n.is_multiple_of(3)).then(|| &codes[2 * n..3 * n]),
        }
    }

    #[test]
    fn round_trips_every_size_and_block_layout() {
        let mut rng = Rng(7);
        let codes: Vec<u8> = (0..3000).map(|i| (i % 3) as u8).collect();
        for n in [0usize, 1, 2, 3, 7, 100, 999] {
            let b = sample(&mut rng, n, &codes);
            for (block, sized) in [(usize::MAX, false), (1, true), (5, true), (7, false)] {
                let data = encode(&b, block, sized);
                assert_eq!(decode(&data, 0).unwrap(), b, "n {n} block {block}");
                assert_eq!(check(&b).unwrap(), (0..n).filter(|i| (n + i) % 3 == 0).count() as u64);
            }
        }
    }

    #[test]
    fn start_offsets_count_in_positions() {
        let codes = [0u8; 3];
        let b = sample(&mut Rng(1), 1, &codes);
        let mut data = vec![0, 0, 0, 0, 1];
        data.extend(encode(&b, 10, false));
        assert_eq!(decode(&data, 5).unwrap(), b);
        data.truncate(20);
        let Error::Malformed(m) = decode(&data, 5).unwrap_err() else {
            panic!()
        };
        assert!(m.starts_with("field ") && m.contains(" at byte "), "{m}");
    }

    #[test]
    fn every_truncation_is_an_error_naming_a_field() {
        let codes = [1u8; 12];
        let b = sample(&mut Rng(3), 4, &codes);
        let data = encode(&b, 3, true);
        for cut in 0..data.len() {
            match decode(&data[..cut], 0) {
                Err(Error::Malformed(m)) => assert!(m.starts_with("field "), "{m}"),
                other => panic!("cut at {cut}: {other:?}"),
            }
        }
        let mut long_data = data.clone();
        long_data.push(0);
        let Error::Malformed(m) = decode(&long_data, 0).unwrap_err() else {
            panic!()
        };
        assert_eq!(m, format!("after field hit: 1 trailing bytes at byte {}", data.len()));
    }

    fn malformed(data: &[u8]) -> String {
        match decode(data, 0) {
            Err(Error::Malformed(m)) => m,
            other => panic!("{other:?}"),
        }
    }

    /// A record's head (source "s", pool "p", three longs) followed by `rest`.
    fn head(rest: &[u8]) -> Vec<u8> {
        let mut out = vec![2, b's', 2, b'p', 0, 0, 0];
        out.extend_from_slice(rest);
        out
    }

    #[test]
    fn bad_varints_lengths_unions_and_text_are_named() {
        assert_eq!(
            malformed(&[0xff; 11]),
            "field source: varint longer than 10 bytes at byte 0"
        );
        let mut over = vec![0xff; 9];
        over.push(0x02);
        assert_eq!(malformed(&over), "field source: varint overflows 64 bits at byte 0");
        assert_eq!(malformed(&[1]), "field source: negative length -1 at byte 0");
        assert!(malformed(&[2, 0xff]).starts_with("field source: invalid UTF-8"));
        assert_eq!(
            malformed(&[4, b'a']),
            "field source: length 2 runs past the end (1 bytes left) at byte 0"
        );
        // object_names empty, time_offset one item of 2^31.
        let m = malformed(&head(&[0, 2, 0x80, 0x80, 0x80, 0x80, 0x10, 0]));
        assert_eq!(
            m,
            "field time_offset: int 2147483648 outside the 32-bit range at byte 9"
        );
        let m = malformed(&head(&[0, 0, 0, 4]));
        assert_eq!(m, "field partition: union branch 2, not 0 (null) or 1 at byte 10");
        let m = malformed(&head(&[0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40]));
        assert!(m.starts_with("field time_offset: block of"), "{m}");
        let m = malformed(&head(&[0, 1, 1]));
        assert_eq!(m, "field time_offset: negative block size -1 at byte 9");
    }

    #[test]
    fn column_checks_say_what_from_record_says() {
        let codes = [0u8; 9];
        let mut b = sample(&mut Rng(5), 3, &codes);
        b.page.pop();
        assert_eq!(
            check(&b),
            Err(Error::Unusable("field page: 2 entries for 3 events".into()))
        );
        let mut b = sample(&mut Rng(5), 3, &codes);
        b.object[1] = 3;
        let want = "field object: index outside object_names (3 names)";
        assert_eq!(check(&b), Err(Error::Unusable(want.into())));
        let mut b = sample(&mut Rng(5), 2, &codes);
        b.hit = Some(&codes[..1]);
        assert_eq!(
            check(&b),
            Err(Error::Unusable("field hit: 1 entries for 2 events".into()))
        );
    }
}
