//! The trace CSV reader's fast path (simulator/csv_block.py `kernel_block`): a block of complete,
//! unquoted lines parsed in one pass into its time and page columns and dictionary-encoded text
//! columns. Only a block every line of which is plain is parsed; anything else (a quote, an
//! empty line, a lone CR, a field count off the header's, a number outside the plain grammar,
//! text that is not UTF-8) gives None, and the caller tries its other paths, the last of which
//! names every bad row. So this path only has to agree with pyarrow on the blocks it accepts.

use rustc_hash::FxHashMap;

/// One text column: each row's code into `values` (first-seen order), the distinct raw values.
#[derive(Debug, Default, PartialEq)]
pub struct Text<'a> {
    pub codes: Vec<i32>,
    pub values: Vec<&'a str>,
}

#[derive(Debug, Default, PartialEq)]
pub struct Parsed<'a> {
    pub rows: usize,
    pub ends: Vec<i64>, // the byte offset after every `Layout::every`-th line
    pub times: Vec<f64>,
    pub pages: Vec<i64>,
    pub texts: Vec<Text<'a>>,
}

/// What to read: the header's width, the time column (None: absent), the page column, the
/// text columns in the order their codes are wanted.
pub struct Layout<'c> {
    pub width: usize,
    pub time: Option<usize>,
    pub page: usize,
    pub texts: &'c [usize],
    pub every: usize, // 0: no ends wanted
}

/// A text column being read: its codes and distinct values, and the value of the line before
/// with its code (most lines repeat most of their text values).
struct Column<'a> {
    text: Text<'a>,
    seen: FxHashMap<&'a [u8], i32>,
    last: Option<(&'a [u8], i32)>,
}

impl<'a> Column<'a> {
    fn new(rows: usize) -> Self {
        let text = Text {
            codes: Vec::with_capacity(rows),
            values: Vec::new(),
        };
        Column {
            text,
            seen: FxHashMap::default(),
            last: None,
        }
    }

    /// None when the value is not UTF-8 (or the column has more than 2^31 values).
    fn push(&mut self, field: &'a [u8]) -> Option<()> {
        let code = match self.last {
            Some((prev, code)) if prev == field => code,
            _ => {
                let code = match self.seen.get(field) {
                    Some(&c) => c,
                    None => {
                        let c = i32::try_from(self.text.values.len()).ok()?;
                        self.text.values.push(std::str::from_utf8(field).ok()?);
                        self.seen.insert(field, c);
                        c
                    }
                };
                self.last = Some((field, code));
                code
            }
        };
        self.text.codes.push(code);
        Some(())
    }
}

enum Role {
    Skip,
    Time,
    Page,
    Text(usize),
}

/// A decimal number as `[-]digits[.digits][e[+-]digits]` (or `.digits`), finite.
fn time_value(f: &[u8]) -> Option<f64> {
    plain_decimal(f).or_else(|| parsed_number(f))
}

const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
    1e21, 1e22,
];

/// `digits[.digits]` whose digits make an integer below 2^53: that integer and the power of ten
/// are exact doubles, so their quotient is the correctly rounded value (Clinger's fast path),
/// the same double a full parse gives. None for anything else.
fn plain_decimal(f: &[u8]) -> Option<f64> {
    let mut m: u64 = 0;
    let mut digits = 0usize;
    let mut frac: Option<usize> = None;
    for &b in f {
        if b.is_ascii_digit() {
            m = m.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
            digits += 1;
            if let Some(k) = frac.as_mut() {
                *k += 1;
            }
        } else if b == b'.' && frac.is_none() {
            frac = Some(0);
        } else {
            return None;
        }
    }
    let k = frac.unwrap_or(0);
    if digits == 0 || m >= 1 << 53 || k >= POW10.len() {
        return None;
    }
    Some(m as f64 / POW10[k])
}

fn parsed_number(f: &[u8]) -> Option<f64> {
    // Rust reads a leading '+', pyarrow does not: such a block is pyarrow's to refuse.
    if f.first() == Some(&b'+')
        || f.is_empty()
        || !f
            .iter()
            .all(|&b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    let v: f64 = std::str::from_utf8(f).ok()?.parse().ok()?;
    v.is_finite().then_some(v)
}

/// A page number: digits only, within int64.
fn page_value(f: &[u8]) -> Option<i64> {
    if f.is_empty() || f.len() > 19 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in f {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v * 10 + u64::from(b - b'0');
    }
    i64::try_from(v).ok()
}

pub fn parse<'a>(block: &'a [u8], layout: &Layout<'_>) -> Option<Parsed<'a>> {
    let mut roles: Vec<Role> = (0..layout.width).map(|_| Role::Skip).collect();
    let mut give = |column: usize, role: Role| -> Option<()> {
        let slot = roles.get_mut(column)?;
        if !matches!(slot, Role::Skip) {
            return None; // two keys on one column (--pool-column X --object-column X): pyarrow's
        }
        *slot = role;
        Some(())
    };
    give(layout.page, Role::Page)?;
    if let Some(t) = layout.time {
        give(t, Role::Time)?;
    }
    for (i, &c) in layout.texts.iter().enumerate() {
        give(c, Role::Text(i))?;
    }
    let guess = block.len() / 32 + 1; // rows, roughly: a project-format line is 40-60 bytes
    let mut out = Parsed {
        rows: 0,
        ends: Vec::new(),
        times: Vec::with_capacity(if layout.time.is_some() { guess } else { 0 }),
        pages: Vec::with_capacity(guess),
        texts: Vec::new(),
    };
    let mut columns: Vec<Column<'a>> = layout.texts.iter().map(|_| Column::new(guess)).collect();
    let n = block.len();
    let mut pos = 0usize;
    while pos < n {
        let mut fields = 0usize;
        loop {
            let start = pos;
            while pos < n && !matches!(block[pos], b',' | b'\n' | b'\r' | b'"') {
                pos += 1;
            }
            let field = &block[start..pos];
            match roles.get(fields)? {
                Role::Skip => {}
                Role::Time => out.times.push(time_value(field)?),
                Role::Page => out.pages.push(page_value(field)?),
                Role::Text(i) => columns[*i].push(field)?,
            }
            fields += 1;
            if pos == n {
                break; // the block's last line, without its newline
            }
            match block[pos] {
                b',' => pos += 1,
                b'\n' => {
                    pos += 1;
                    break;
                }
                b'\r' if block.get(pos + 1) == Some(&b'\n') => {
                    pos += 2;
                    break;
                }
                _ => return None, // a quote, or a CR that does not end a line
            }
        }
        if fields != layout.width {
            return None; // an empty line (one empty field) too, the header having more than one
        }
        out.rows += 1;
        if layout.every > 0 && out.rows.is_multiple_of(layout.every) {
            out.ends.push(i64::try_from(pos).ok()?);
        }
    }
    out.texts = columns.into_iter().map(|c| c.text).collect();
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAYOUT: Layout<'static> = Layout {
        width: 4,
        time: Some(0),
        page: 2,
        texts: &[1, 3],
        every: 2,
    };

    #[test]
    fn a_plain_block_gives_its_columns_and_first_seen_dictionaries() {
        let p = parse(b"1.5,BP1,7,L\r\n2e1,BP2,0,R\n-3,BP1,9223372036854775807, L", &LAYOUT).unwrap();
        assert_eq!((p.rows, p.ends), (3, vec![25])); // after "\r\n" and the second line
        assert_eq!(p.times, vec![1.5, 20.0, -3.0]);
        assert_eq!(p.pages, vec![7, 0, i64::MAX]);
        assert_eq!(
            p.texts[0],
            Text {
                codes: vec![0, 1, 0],
                values: vec!["BP1", "BP2"]
            }
        );
        assert_eq!(
            p.texts[1],
            Text {
                codes: vec![0, 1, 2],
                values: vec!["L", "R", " L"]
            }
        );
    }

    #[test]
    fn anything_not_plain_is_left_to_the_other_paths() {
        for bad in [
            &b"1,BP1,7,L\n\n2,BP1,8,L\n"[..], // an empty line
            b"1,BP1,7,L\r2,BP1,8,L\n",        // a lone CR
            b"1,BP1,7\n",                     // too few fields
            b"1,BP1,7,L,x\n",                 // too many
            b"1,\"BP1\",7,L\n",               // a quote
            b"nan,BP1,7,L\n",                 // not a plain number
            b"1e999,BP1,7,L\n",               // not finite
            b"1,BP1,-7,L\n",                  // a negative page
            b"1,BP1,9223372036854775808,L\n", // past int64
            b"1,BP1, 7,L\n",                  // a blank in a number
            b"1,B\xffP,7,L\n",                // not UTF-8
            b"+1.5,BP1,7,L\n",                // a sign pyarrow does not read
            b"\n",
        ] {
            assert_eq!(parse(bad, &LAYOUT), None, "{:?}", String::from_utf8_lossy(bad));
        }
        assert_eq!(parse(b"", &LAYOUT).map(|p| p.rows), Some(0));
    }

    #[test]
    fn the_fast_decimal_path_gives_the_full_parse_s_double() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let int = x % 10_000_000_000;
            let frac = (x >> 40) % 1_000_000;
            for s in [
                format!("{int}.{frac:06}"),
                format!("{}.{}", x % 1000, x % 97),
                format!("{}", x >> 12),
            ] {
                let want: f64 = s.parse().unwrap();
                assert_eq!(time_value(s.as_bytes()).map(f64::to_bits), Some(want.to_bits()), "{s}");
            }
        }
        for s in [
            "0.1",
            "9007199254740991",
            "9007199254740993",
            "12345678901234567890.5",
            "1.",
            ".5",
            "1e3",
            "-2.5",
        ] {
            assert_eq!(time_value(s.as_bytes()), s.parse().ok(), "{s}");
        }
    }

    #[test]
    fn two_keys_on_one_column_are_left_to_the_other_paths() {
        let layout = Layout {
            width: 3,
            time: None,
            page: 0,
            texts: &[1, 1],
            every: 0,
        };
        assert_eq!(parse(b"5,a,x\n", &layout), None);
    }

    #[test]
    fn columns_not_asked_for_are_not_checked() {
        let layout = Layout {
            width: 3,
            time: None,
            page: 0,
            texts: &[],
            every: 0,
        };
        let p = parse(b"5,\xff,x\n6,,y\n", &layout).unwrap();
        assert_eq!((p.rows, p.pages, p.times.len()), (2, vec![5, 6], 0));
    }
}
