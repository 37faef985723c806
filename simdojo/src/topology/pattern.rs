//! Path patterns: `gpu.xcd[0..8].se[0..4].cu[0..10]`, `lp[($i+1)%16].in`, `[0,2,5]`.
//!
//! A pattern is literal text with bracket groups. A group holds comma-separated items;
//! an item is an index expression (`3`, `$i`, `($i+1)%16`) or a half-open range of two
//! expressions (`0..8`, `$i..$i+2`). A pattern expands to the cartesian product of its
//! groups, row-major (the first group varies slowest). Expressions are integer
//! arithmetic over `for` variables with `+ - * / %`, parentheses and unary minus; `/`
//! rounds toward negative infinity and `%` is never negative for a positive divisor, so
//! `($i-1)%16` wraps around a ring.

use std::rc::Rc;

use crate::topology::error::{DiagnosticKind, Problem};

/// A problem at a byte offset of the pattern text.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct PatternError {
    pub(crate) offset: usize,
    pub(crate) problem: Problem,
}

fn err(offset: usize, kind: DiagnosticKind, problem: impl Into<String>, expected: impl Into<String>) -> PatternError {
    PatternError { offset, problem: Problem::new(kind, problem, expected) }
}

/// Values of the `for` variables in scope, innermost last.
pub(crate) type Env = Vec<(Rc<str>, i64)>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

#[derive(Clone, Debug)]
enum Expr {
    Num(i64),
    Var { name: String, offset: usize },
    Neg(Box<Expr>, usize),
    Bin(Op, Box<Expr>, Box<Expr>, usize),
}

impl Expr {
    fn eval(&self, env: &Env) -> Result<i64, PatternError> {
        let overflow =
            |offset| err(offset, DiagnosticKind::BadPath, "index arithmetic overflows", "values within 64 bits");
        match self {
            Expr::Num(n) => Ok(*n),
            Expr::Var { name, offset } => {
                env.iter().rev().find(|(n, _)| **n == **name).map(|(_, v)| *v).ok_or_else(|| {
                    let known: Vec<String> = env.iter().map(|(n, _)| format!("${n}")).collect();
                    err(
                        *offset,
                        DiagnosticKind::BadPath,
                        format!("unknown variable `${name}`"),
                        if known.is_empty() {
                            "a variable bound by `for = { NAME = \"0..N\" }`".to_string()
                        } else {
                            format!("one of the `for` variables {}", known.join(", "))
                        },
                    )
                })
            }
            Expr::Neg(e, offset) => e.eval(env)?.checked_neg().ok_or_else(|| overflow(*offset)),
            Expr::Bin(op, a, b, offset) => {
                let (a, b) = (a.eval(env)?, b.eval(env)?);
                let zero = || {
                    err(
                        *offset,
                        DiagnosticKind::BadPath,
                        "division by zero in an index expression",
                        "a non-zero divisor",
                    )
                };
                match op {
                    Op::Add => a.checked_add(b).ok_or_else(|| overflow(*offset)),
                    Op::Sub => a.checked_sub(b).ok_or_else(|| overflow(*offset)),
                    Op::Mul => a.checked_mul(b).ok_or_else(|| overflow(*offset)),
                    Op::Div if b == 0 => Err(zero()),
                    Op::Rem if b == 0 => Err(zero()),
                    Op::Div => a.checked_div_euclid(b).ok_or_else(|| overflow(*offset)),
                    Op::Rem => a.checked_rem_euclid(b).ok_or_else(|| overflow(*offset)),
                }
            }
        }
    }
}

#[derive(Clone, Debug)]
enum Item {
    One(Expr),
    Range(Expr, Expr, usize),
}

/// Comma-separated items: the inside of a bracket group, or a `for` variable's values.
#[derive(Clone, Debug)]
pub(crate) struct Group {
    items: Vec<Item>,
}

impl Group {
    /// The values of the group under `env`, each range checked against `limit`.
    pub(crate) fn values(&self, env: &Env, limit: usize) -> Result<Vec<i64>, PatternError> {
        let mut out = Vec::new();
        for item in &self.items {
            match item {
                Item::One(e) => out.push(e.eval(env)?),
                Item::Range(a, b, offset) => {
                    let (start, end) = (a.eval(env)?, b.eval(env)?);
                    range_len(start, end, *offset, out.len() as u64, limit)?;
                    out.extend(start..end);
                }
            }
        }
        Ok(out)
    }

    /// How many values [`Group::values`] gives, with its checks, without making them.
    pub(crate) fn count(&self, env: &Env, limit: usize) -> Result<u64, PatternError> {
        let mut n = 0u64;
        for item in &self.items {
            match item {
                Item::One(e) => {
                    e.eval(env)?;
                    n += 1;
                }
                Item::Range(a, b, offset) => {
                    let (start, end) = (a.eval(env)?, b.eval(env)?);
                    n += range_len(start, end, *offset, n, limit)?;
                }
            }
        }
        Ok(n)
    }
}

/// The length of the range `start..end` at `offset`, when it is not empty and, after
/// `so_far` values, keeps the group within `limit` values.
fn range_len(start: i64, end: i64, offset: usize, so_far: u64, limit: usize) -> Result<u64, PatternError> {
    if start >= end {
        return Err(err(
            offset,
            DiagnosticKind::Range,
            format!("range {start}..{end} is empty or reversed"),
            "START..END with START < END (END is excluded)",
        ));
    }
    let len = end.abs_diff(start);
    if len > limit as u64 || so_far + len > limit as u64 {
        return Err(err(
            offset,
            DiagnosticKind::TooLarge,
            format!("range {start}..{end} has {len} indices"),
            format!("at most {limit} indices per range"),
        ));
    }
    Ok(len)
}

/// A parsed pattern.
#[derive(Clone, Debug)]
pub(crate) struct Pattern {
    segs: Vec<Seg>,
}

#[derive(Clone, Debug)]
enum Seg {
    Lit(String),
    Group { group: Group, offset: usize },
}

impl Pattern {
    /// Parses `text`.
    pub(crate) fn parse(text: &str) -> Result<Pattern, PatternError> {
        let mut segs = Vec::new();
        let mut lit = String::new();
        let mut p = Parser { text, pos: 0 };
        while let Some(c) = p.peek() {
            match c {
                '[' => {
                    if !lit.is_empty() {
                        segs.push(Seg::Lit(std::mem::take(&mut lit)));
                    }
                    let offset = p.pos;
                    p.pos += 1;
                    let group = p.group()?;
                    p.skip_ws();
                    if p.peek() != Some(']') {
                        return Err(err(p.pos, DiagnosticKind::BadPath, "unclosed index group", "`]`"));
                    }
                    p.pos += 1;
                    segs.push(Seg::Group { group, offset });
                }
                c if c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.' => {
                    lit.push(c);
                    p.pos += 1;
                }
                _ => {
                    return Err(err(
                        p.pos,
                        DiagnosticKind::BadPath,
                        format!("unexpected character {c:?} in a path"),
                        "letters, digits, `_`, `-`, `.` and [index] groups",
                    ))
                }
            }
        }
        if !lit.is_empty() {
            segs.push(Seg::Lit(lit));
        }
        Ok(Pattern { segs })
    }

    /// How many names [`Pattern::expand`] gives under `env`, checked as it checks them
    /// (so a huge pattern can be refused before its names take memory).
    pub(crate) fn count(&self, env: &Env, limit: usize) -> Result<u64, PatternError> {
        let mut total: u64 = 1;
        for seg in &self.segs {
            if let Seg::Group { group, offset } = seg {
                total = total.saturating_mul(group.count(env, limit)?);
                if total > limit as u64 {
                    return Err(too_many_names(*offset, limit));
                }
            }
        }
        Ok(total)
    }

    /// Expands the pattern under `env` into at most `limit` strings, row-major.
    pub(crate) fn expand(&self, env: &Env, limit: usize) -> Result<Vec<String>, PatternError> {
        let mut groups: Vec<(Vec<i64>, usize)> = Vec::new();
        let mut total: u64 = 1;
        for seg in &self.segs {
            if let Seg::Group { group, offset } = seg {
                let values = group.values(env, limit)?;
                if let Some(&v) = values.iter().find(|&&v| v < 0) {
                    return Err(err(
                        *offset,
                        DiagnosticKind::BadPath,
                        format!("index {v} is negative"),
                        "indices >= 0",
                    ));
                }
                total = total.saturating_mul(values.len() as u64);
                if total > limit as u64 {
                    return Err(too_many_names(*offset, limit));
                }
                groups.push((values, *offset));
            }
        }
        let mut out = Vec::with_capacity(total as usize);
        let mut odometer = vec![0usize; groups.len()];
        loop {
            let mut name = String::new();
            let mut g = 0;
            for seg in &self.segs {
                match seg {
                    Seg::Lit(s) => name.push_str(s),
                    Seg::Group { .. } => {
                        name.push('[');
                        name.push_str(&groups[g].0[odometer[g]].to_string());
                        name.push(']');
                        g += 1;
                    }
                }
            }
            out.push(name);
            // Advance the last group fastest.
            let mut k = groups.len();
            loop {
                if k == 0 {
                    return Ok(out);
                }
                k -= 1;
                odometer[k] += 1;
                if odometer[k] < groups[k].0.len() {
                    break;
                }
                odometer[k] = 0;
            }
        }
    }
}

fn too_many_names(offset: usize, limit: usize) -> PatternError {
    err(
        offset,
        DiagnosticKind::TooLarge,
        format!("the pattern expands to more than {limit} names"),
        format!("at most {limit} names per pattern"),
    )
}

/// Parses the values of a `for` variable: `"0..16"`, `"0,2,5"` or `"[0..4, 8]"`.
pub(crate) fn parse_values(text: &str) -> Result<Group, PatternError> {
    let mut p = Parser { text, pos: 0 };
    p.skip_ws();
    let bracketed = p.peek() == Some('[');
    if bracketed {
        p.pos += 1;
    }
    let group = p.group()?;
    p.skip_ws();
    if bracketed {
        if p.peek() != Some(']') {
            return Err(err(p.pos, DiagnosticKind::BadPath, "unclosed `[`", "`]`"));
        }
        p.pos += 1;
        p.skip_ws();
    }
    if p.pos < text.len() {
        return Err(err(p.pos, DiagnosticKind::BadPath, "unexpected text after the values", "`START..END` or `A,B,C`"));
    }
    Ok(group)
}

/// A single index value (an integer from a JSON/TOML array).
pub(crate) fn literal_group(values: &[i64]) -> Group {
    Group { items: values.iter().map(|&v| Item::One(Expr::Num(v))).collect() }
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

const MAX_DEPTH: usize = 64;

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn skip_ws(&mut self) {
        while let Some(c) = self.peek() {
            if c == ' ' || c == '\t' {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    fn group(&mut self) -> Result<Group, PatternError> {
        let mut items = Vec::new();
        loop {
            self.skip_ws();
            let start = self.pos;
            let a = self.expr(0)?;
            self.skip_ws();
            if self.text[self.pos..].starts_with("..") {
                self.pos += 2;
                let b = self.expr(0)?;
                items.push(Item::Range(a, b, start));
            } else {
                items.push(Item::One(a));
            }
            self.skip_ws();
            if self.peek() == Some(',') {
                self.pos += 1;
            } else {
                return Ok(Group { items });
            }
        }
    }

    fn expr(&mut self, depth: usize) -> Result<Expr, PatternError> {
        let mut lhs = self.term(depth)?;
        loop {
            self.skip_ws();
            let offset = self.pos;
            let op = match self.peek() {
                Some('+') => Op::Add,
                Some('-') => Op::Sub,
                _ => return Ok(lhs),
            };
            self.pos += 1;
            let rhs = self.term(depth)?;
            lhs = Expr::Bin(op, Box::new(lhs), Box::new(rhs), offset);
        }
    }

    fn term(&mut self, depth: usize) -> Result<Expr, PatternError> {
        let mut lhs = self.unary(depth)?;
        loop {
            self.skip_ws();
            let offset = self.pos;
            let op = match self.peek() {
                Some('*') => Op::Mul,
                Some('/') => Op::Div,
                Some('%') => Op::Rem,
                _ => return Ok(lhs),
            };
            self.pos += 1;
            let rhs = self.unary(depth)?;
            lhs = Expr::Bin(op, Box::new(lhs), Box::new(rhs), offset);
        }
    }

    fn unary(&mut self, depth: usize) -> Result<Expr, PatternError> {
        if depth > MAX_DEPTH {
            return Err(err(
                self.pos,
                DiagnosticKind::BadPath,
                "index expression nested too deeply",
                "a simpler expression",
            ));
        }
        self.skip_ws();
        let offset = self.pos;
        match self.peek() {
            Some('-') => {
                self.pos += 1;
                Ok(Expr::Neg(Box::new(self.unary(depth + 1)?), offset))
            }
            Some('(') => {
                self.pos += 1;
                let e = self.expr(depth + 1)?;
                self.skip_ws();
                if self.peek() != Some(')') {
                    return Err(err(self.pos, DiagnosticKind::BadPath, "unclosed parenthesis", "`)`"));
                }
                self.pos += 1;
                Ok(e)
            }
            Some('$') => {
                self.pos += 1;
                let name = self.ident();
                if name.is_empty() {
                    return Err(err(self.pos, DiagnosticKind::BadPath, "`$` without a variable name", "`$NAME`"));
                }
                Ok(Expr::Var { name, offset })
            }
            Some(c) if c.is_ascii_digit() => {
                let digits: String = self.text[self.pos..].chars().take_while(|c| c.is_ascii_digit()).collect();
                self.pos += digits.len();
                digits.parse::<i64>().map(Expr::Num).map_err(|_| {
                    err(
                        offset,
                        DiagnosticKind::TooLarge,
                        format!("index {digits} does not fit in 64 bits"),
                        "a smaller index",
                    )
                })
            }
            Some(c) => Err(err(
                offset,
                DiagnosticKind::BadPath,
                format!("unexpected {c:?} in an index"),
                "an index: a number, `$var`, an expression or `START..END`",
            )),
            None => Err(err(
                offset,
                DiagnosticKind::BadPath,
                "the index ends early",
                "an index: a number, `$var` or `START..END`",
            )),
        }
    }

    fn ident(&mut self) -> String {
        let name: String =
            self.text[self.pos..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        self.pos += name.len();
        name
    }
}

/// Checks a concrete component path: dot-separated names, each optionally followed by
/// `[index]` groups. Returns a description of the first problem.
pub(crate) fn check_path(path: &str) -> Result<(), Problem> {
    let bad = |why: &str| {
        Problem::new(
            DiagnosticKind::BadPath,
            format!("`{path}` is not a valid path ({why})"),
            "dot-separated names like `gpu.xcd[3].cu[7]`, each starting with a letter or `_`",
        )
    };
    if path.is_empty() {
        return Err(bad("it is empty"));
    }
    for seg in split_segments(path) {
        let name_len = seg.find('[').unwrap_or(seg.len());
        let name = &seg[..name_len];
        let mut chars = name.chars();
        match chars.next() {
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {}
            _ => return Err(bad("a segment does not start with a name")),
        }
        if !chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err(bad("a name has a character other than letters, digits, `_`, `-`"));
        }
        let mut rest = &seg[name_len..];
        while !rest.is_empty() {
            let Some(inner) = rest.strip_prefix('[') else { return Err(bad("text follows an index")) };
            let Some(close) = inner.find(']') else { return Err(bad("unclosed `[`")) };
            let index = &inner[..close];
            if index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad("an index is not a number"));
            }
            rest = &inner[close + 1..];
        }
    }
    Ok(())
}

/// The dot-separated segments of a concrete path (dots inside brackets do not split).
pub(crate) fn split_segments(path: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in path.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            '.' if depth == 0 => {
                out.push(&path[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&path[start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(p: &str, env: &Env) -> Vec<String> {
        Pattern::parse(p).unwrap().expand(env, 1 << 20).unwrap()
    }

    #[test]
    fn ranges_and_lists_expand_row_major() {
        assert_eq!(expand("a[0..2].b[0,5]", &vec![]), ["a[0].b[0]", "a[0].b[5]", "a[1].b[0]", "a[1].b[5]"]);
        assert_eq!(expand("x", &vec![]), ["x"]);
        assert_eq!(expand("x[1..3, 7]", &vec![]), ["x[1]", "x[2]", "x[7]"]);
    }

    #[test]
    fn count_agrees_with_expand_and_refuses_alike() {
        let env = vec![("i".into(), 3)];
        for p in ["x", "a[0..2].b[0,5]", "x[1..3, 7]", "m[$i*4+2..$i*4+4].n[0..3]", "y[$i]"] {
            let pattern = Pattern::parse(p).unwrap();
            assert_eq!(pattern.count(&env, 100).unwrap(), pattern.expand(&env, 100).unwrap().len() as u64, "{p}");
        }
        for (p, limit) in [("a[0..10].b[0..20]", 100), ("a[5..2]", 100), ("a[0..1000]", 100), ("a[$j]", 100)] {
            let pattern = Pattern::parse(p).unwrap();
            assert_eq!(pattern.count(&env, limit).unwrap_err(), pattern.expand(&env, limit).unwrap_err(), "{p}");
        }
    }

    #[test]
    fn expressions_use_variables_and_wrap() {
        let env = vec![("i".into(), 15)];
        assert_eq!(expand("lp[($i+1)%16].in", &env), ["lp[0].in"]);
        let env = vec![("i".into(), 0)];
        assert_eq!(expand("lp[($i - 1) % 16]", &env), ["lp[15]"]);
        assert_eq!(expand("m[$i*4+2..$i*4+4]", &env), ["m[2]", "m[3]"]);
    }

    #[test]
    fn bad_patterns_say_where() {
        let e = Pattern::parse("a[5..2]").unwrap().expand(&vec![], 100).unwrap_err();
        assert_eq!((e.offset, e.problem.kind), (2, DiagnosticKind::Range));
        let e = Pattern::parse("a[0..1000]").unwrap().expand(&vec![], 100).unwrap_err();
        assert_eq!(e.problem.kind, DiagnosticKind::TooLarge);
        let e = Pattern::parse("a[0..10].b[0..11]").unwrap().expand(&vec![], 100).unwrap_err();
        assert_eq!((e.offset, e.problem.kind), (10, DiagnosticKind::TooLarge));
        let e = Pattern::parse("a[$j]").unwrap().expand(&vec![], 100).unwrap_err();
        assert_eq!(e.offset, 2);
        assert_eq!(Pattern::parse("a[1").unwrap_err().offset, 3);
        assert_eq!(Pattern::parse("a b").unwrap_err().offset, 1);
        assert!(Pattern::parse("a[1/0]").unwrap().expand(&vec![], 10).is_err());
    }

    #[test]
    fn concrete_paths_are_checked() {
        assert!(check_path("gpu.xcd[3].cu[7]").is_ok());
        assert!(check_path("a..b").is_err());
        assert!(check_path("3a").is_err());
        assert!(check_path("a[x]").is_err());
        assert!(check_path("a[1]é]").is_err());
        assert!(check_path("a[1][2].b").is_ok());
        assert!(check_path("a[1]b").is_err());
        assert_eq!(split_segments("a[1].b"), ["a[1]", "b"]);
    }
}
