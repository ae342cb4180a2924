//! The small expression language of rules files: whole numbers, names, arithmetic,
//! comparisons, `and`/`or`/`not` and a handful of functions — and the effect statements
//! (`defender.strength -= 2`, `lose(attacker, hits, infantry, tank)`, `end`, `roll crt`).
//!
//! Why this module exists (and not an expression crate): a rules file's conditions must
//! evaluate to the same whole number on every machine, never fail once validated, and
//! be checked for the range of values they can take (a metric's histogram, a table's
//! row) before anything runs. A parser of forty lines of grammar written for exactly that
//! — integers only, names resolved to slots once, no division by zero, saturating
//! arithmetic — is smaller than adapting a general crate (evalexpr's floats, strings and
//! mutable contexts are all things a rules file must not have).
//!
//! Grammar (loosest first): `or` · `and` · `not` · comparisons (`== != < <= > >=`) ·
//! `+ -` · `* / %` · unary `-` · atoms: a whole number, `true`/`false`, a name
//! (`attacker.strength`, `terrain`, `round`), `( … )`, or a call `min(a, b, …)`,
//! `max(…)`, `clamp(x, lo, hi)`, `abs(x)`, `if(condition, then, else)`.
//! `/` rounds toward minus infinity and `x / 0` is 0 (so no expression can fail).

use std::fmt;
use std::sync::Arc;

/// An expression's tree, names resolved to slots of the evaluation frame: what the
/// checks read (its range, its slots) and what folding rewrites.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    Int(i64),
    Slot(usize),
    Neg(Box<Node>),
    Not(Box<Node>),
    Binary(BinOp, Box<Node>, Box<Node>),
    Call(Func, Vec<Node>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    Min,
    Max,
    Clamp,
    Abs,
    If,
}

impl Func {
    const ALL: [(&'static str, Func); 5] = [
        ("min", Func::Min),
        ("max", Func::Max),
        ("clamp", Func::Clamp),
        ("abs", Func::Abs),
        ("if", Func::If),
    ];
}

/// Why an expression was refused: the message says what is allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExprError(pub String);

impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The names an expression may use, and the slot each reads, with the range of values
/// the slot can hold (for [`Node::range`]).
pub trait Scope {
    /// The slot of `name` and its range, or `None` for an unknown name.
    fn slot(&self, name: &str) -> Option<(usize, (i64, i64))>;
    /// Every name, for the error that lists them.
    fn names(&self) -> Vec<String>;
    /// The range of slot `slot`.
    fn range(&self, slot: usize) -> (i64, i64);
    /// The value of a constant name (a choice's option: `tactic.withdraw`), if `name` is
    /// one.
    fn constant(&self, _name: &str) -> Option<i64> {
        None
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Int(i64),
    Name(String),
    Op(&'static str),
    Open,
    Close,
    Comma,
}

const OPS: [&str; 15] = [
    "==", "!=", "<=", ">=", "+=", "-=", "<", ">", "+", "-", "*", "/", "%", "=", "!",
];

fn tokens(text: &str) -> Result<Vec<Token>, ExprError> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i] as char;
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'_') {
                i += 1;
            }
            let digits: String = text[start..i].chars().filter(|c| *c != '_').collect();
            let value = digits.parse::<i64>().map_err(|_| {
                ExprError(format!(
                    "the number {digits} is too large (at most 9 digits)"
                ))
            })?;
            if value > 999_999_999 {
                return Err(ExprError(format!(
                    "the number {digits} is too large (at most 9 digits)"
                )));
            }
            out.push(Token::Int(value));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'.')
            {
                i += 1;
            }
            out.push(Token::Name(text[start..i].to_string()));
        } else if c == '(' {
            out.push(Token::Open);
            i += 1;
        } else if c == ')' {
            out.push(Token::Close);
            i += 1;
        } else if c == ',' {
            out.push(Token::Comma);
            i += 1;
        } else if let Some(op) = OPS.iter().find(|op| text[i..].starts_with(**op)) {
            out.push(Token::Op(op));
            i += op.len();
        } else {
            let shown: String = text[i..].chars().next().into_iter().collect();
            return Err(ExprError(format!(
                "unexpected `{shown}`; expressions use whole numbers, names, + - * / %, == != < <= > >=, and, or, not, ( ) and min, max, clamp, abs, if"
            )));
        }
    }
    Ok(out)
}

struct Parser<'s> {
    tokens: Vec<Token>,
    at: usize,
    scope: &'s dyn Scope,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.at).cloned();
        self.at += 1;
        t
    }

    fn word(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Token::Name(n)) if n == w)
    }

    fn op(&self) -> Option<&'static str> {
        match self.peek() {
            Some(Token::Op(op)) => Some(op),
            _ => None,
        }
    }

    fn or(&mut self) -> Result<Node, ExprError> {
        let mut left = self.and()?;
        while self.word("or") {
            self.at += 1;
            left = Node::Binary(BinOp::Or, Box::new(left), Box::new(self.and()?));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Node, ExprError> {
        let mut left = self.not()?;
        while self.word("and") {
            self.at += 1;
            left = Node::Binary(BinOp::And, Box::new(left), Box::new(self.not()?));
        }
        Ok(left)
    }

    fn not(&mut self) -> Result<Node, ExprError> {
        if self.word("not") || self.op() == Some("!") {
            self.at += 1;
            return Ok(Node::Not(Box::new(self.not()?)));
        }
        self.comparison()
    }

    fn comparison(&mut self) -> Result<Node, ExprError> {
        let left = self.sum()?;
        let op = match self.op() {
            Some("==") => BinOp::Eq,
            Some("!=") => BinOp::Ne,
            Some("<") => BinOp::Lt,
            Some("<=") => BinOp::Le,
            Some(">") => BinOp::Gt,
            Some(">=") => BinOp::Ge,
            Some("=") => {
                return Err(ExprError(
                    "`=` sets a counter in an effect; to compare, write `==`".into(),
                ))
            }
            _ => return Ok(left),
        };
        self.at += 1;
        let right = self.sum()?;
        if matches!(self.op(), Some("==" | "!=" | "<" | "<=" | ">" | ">=")) {
            return Err(ExprError(
                "comparisons do not chain; write `a < b and b < c`".into(),
            ));
        }
        Ok(Node::Binary(op, Box::new(left), Box::new(right)))
    }

    fn sum(&mut self) -> Result<Node, ExprError> {
        let mut left = self.product()?;
        loop {
            let op = match self.op() {
                Some("+") => BinOp::Add,
                Some("-") => BinOp::Sub,
                _ => return Ok(left),
            };
            self.at += 1;
            left = Node::Binary(op, Box::new(left), Box::new(self.product()?));
        }
    }

    fn product(&mut self) -> Result<Node, ExprError> {
        let mut left = self.unary()?;
        loop {
            let op = match self.op() {
                Some("*") => BinOp::Mul,
                Some("/") => BinOp::Div,
                Some("%") => BinOp::Rem,
                _ => return Ok(left),
            };
            self.at += 1;
            left = Node::Binary(op, Box::new(left), Box::new(self.unary()?));
        }
    }

    fn unary(&mut self) -> Result<Node, ExprError> {
        match self.op() {
            Some("-") => {
                self.at += 1;
                Ok(Node::Neg(Box::new(self.unary()?)))
            }
            Some("+") => {
                self.at += 1;
                self.unary()
            }
            _ => self.atom(),
        }
    }

    fn atom(&mut self) -> Result<Node, ExprError> {
        match self.next() {
            Some(Token::Int(v)) => Ok(Node::Int(v)),
            Some(Token::Open) => {
                let inner = self.or()?;
                match self.next() {
                    Some(Token::Close) => Ok(inner),
                    _ => Err(ExprError("a `(` without its `)`".into())),
                }
            }
            Some(Token::Name(name)) => {
                if self.peek() == Some(&Token::Open) {
                    return self.call(&name);
                }
                match name.as_str() {
                    "true" => return Ok(Node::Int(1)),
                    "false" => return Ok(Node::Int(0)),
                    "and" | "or" | "not" => {
                        return Err(ExprError(format!("`{name}` needs a value before it")))
                    }
                    _ => {}
                }
                if let Some(value) = self.scope.constant(&name) {
                    return Ok(Node::Int(value));
                }
                match self.scope.slot(&name) {
                    Some((slot, _)) => Ok(Node::Slot(slot)),
                    None => Err(unknown_name(&name, &self.scope.names())),
                }
            }
            Some(Token::Close) => Err(ExprError("a `)` without its `(`".into())),
            Some(Token::Comma) => Err(ExprError("a `,` outside a call".into())),
            Some(Token::Op(op)) => Err(ExprError(format!("`{op}` needs a value before it"))),
            None => Err(ExprError("the expression ends too early".into())),
        }
    }

    fn call(&mut self, name: &str) -> Result<Node, ExprError> {
        let func = Func::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, f)| *f)
            .ok_or_else(|| {
                ExprError(format!(
                    "unknown function `{name}`; functions: min, max, clamp, abs, if"
                ))
            })?;
        self.at += 1; // (
        let mut args = Vec::new();
        if self.peek() == Some(&Token::Close) {
            self.at += 1;
        } else {
            loop {
                args.push(self.or()?);
                match self.next() {
                    Some(Token::Comma) => continue,
                    Some(Token::Close) => break,
                    _ => return Err(ExprError(format!("`{name}(` without its `)`"))),
                }
            }
        }
        let wanted = match func {
            Func::Min | Func::Max => (1, usize::MAX, "one or more values"),
            Func::Clamp => (3, 3, "three values: clamp(value, lowest, highest)"),
            Func::Abs => (1, 1, "one value"),
            Func::If => (3, 3, "three values: if(condition, then, otherwise)"),
        };
        if args.len() < wanted.0 || args.len() > wanted.1 {
            return Err(ExprError(format!(
                "{name} takes {}, got {}",
                wanted.2,
                args.len()
            )));
        }
        Ok(Node::Call(func, args))
    }
}

fn unknown_name(name: &str, names: &[String]) -> ExprError {
    let hint = crate::toml_input::closest(name, names.iter().map(String::as_str))
        .map(|c| format!(" (did you mean `{c}`?)"))
        .unwrap_or_default();
    let mut listed = names.to_vec();
    listed.truncate(40);
    ExprError(format!(
        "unknown name `{name}`{hint}; names here: {}",
        listed.join(", ")
    ))
}

/// Parses `text` as one expression, names resolved in `scope`.
pub fn parse(text: &str, scope: &dyn Scope) -> Result<Expr, ExprError> {
    if text.len() > 2000 {
        return Err(ExprError(
            "an expression longer than 2000 characters".into(),
        ));
    }
    let mut parser = Parser {
        tokens: tokens(text)?,
        at: 0,
        scope,
    };
    if parser.tokens.is_empty() {
        return Err(ExprError("an empty expression".into()));
    }
    let expr = parser.or()?;
    if let Some(extra) = parser.peek() {
        let shown = match extra {
            Token::Int(v) => v.to_string(),
            Token::Name(n) => n.clone(),
            Token::Op(op) => (*op).to_string(),
            Token::Open => "(".into(),
            Token::Close => ")".into(),
            Token::Comma => ",".into(),
        };
        return Err(ExprError(format!(
            "unexpected `{shown}` after a complete expression"
        )));
    }
    // The checks walk the tree recursively: its depth is bounded. A sum or product of
    // n terms is n deep, so the bound leaves room for long sums of modifiers.
    if depth(&expr) > MAX_DEPTH {
        return Err(ExprError(format!(
            "an expression nested more than {MAX_DEPTH} deep (a sum of more than {MAX_DEPTH} terms counts as that deep): put part of it in a scratch value"
        )));
    }
    Ok(Expr::new(expr))
}

/// The deepest expression tree a file may write ([`parse`]).
const MAX_DEPTH: usize = 256;

fn depth(e: &Node) -> usize {
    match e {
        Node::Int(_) | Node::Slot(_) => 1,
        Node::Neg(x) | Node::Not(x) => 1 + depth(x),
        Node::Binary(_, a, b) => 1 + depth(a).max(depth(b)),
        Node::Call(_, args) => 1 + args.iter().map(depth).max().unwrap_or(0),
    }
}

fn truth(v: i64) -> bool {
    v != 0
}

/// `a op b`, as every form of an expression computes it: saturating, floor division,
/// `x / 0` and `x % 0` are 0; `and`/`or` of two truths.
#[inline(always)]
fn apply(op: BinOp, a: i64, b: i64) -> i64 {
    match op {
        BinOp::Add => a.saturating_add(b),
        BinOp::Sub => a.saturating_sub(b),
        BinOp::Mul => a.saturating_mul(b),
        BinOp::Div => match a.checked_div(b) {
            // floor division: rounds toward minus infinity
            Some(q) if (a % b != 0) && ((a < 0) != (b < 0)) => q - 1,
            Some(q) => q,
            None if b == 0 => 0,
            None => i64::MAX,
        },
        BinOp::Rem => {
            if b == 0 {
                0
            } else {
                a.checked_rem_euclid(b).unwrap_or(0)
            }
        }
        BinOp::Eq => i64::from(a == b),
        BinOp::Ne => i64::from(a != b),
        BinOp::Lt => i64::from(a < b),
        BinOp::Le => i64::from(a <= b),
        BinOp::Gt => i64::from(a > b),
        BinOp::Ge => i64::from(a >= b),
        BinOp::And => i64::from(truth(a) && truth(b)),
        BinOp::Or => i64::from(truth(a) || truth(b)),
    }
}

/// One step of an expression's code: postfix, each step taking its operands from the top
/// of the stack and leaving its value there.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Int(i64),
    Slot(u32),
    /// `top = top op frame[slot]`: a binary operation whose right side is a slot.
    BinSlot(BinOp, u32),
    /// `top = top op value`: a binary operation whose right side is a number.
    BinInt(BinOp, i64),
    Neg,
    Not,
    Bin(BinOp),
    Min(u32),
    Max(u32),
    Min2,
    Max2,
    Clamp,
    Abs,
    If,
    /// `if(condition, then, otherwise)` of three slots, pushed.
    IfSlots(u32, u32, u32),
    /// `top = top op if(frame[c], frame[t], frame[e])`: a binary operation whose right
    /// side is an `if` of three slots.
    BinIfSlots(BinOp, u32, u32, u32),
    /// `top = min(top, frame[slot])`, `max(top, frame[slot])`, and with a number.
    MinSlot(u32),
    MaxSlot(u32),
    MinInt(i64),
    MaxInt(i64),
    /// `top = clamp(top, lo, hi)` of two numbers.
    ClampInts(i64, i64),
}

/// The deepest stack an expression's code may use; deeper ones walk the tree.
const STACK: usize = 16;
/// The stack of code that needs no deeper one (PERF: most expressions; zeroing a
/// sixteen-word stack was a tenth of running one).
const SHALLOW: usize = 4;

/// An expression, names resolved to slots of the evaluation frame: its tree (which the
/// checks read) and the same tree laid out as flat postfix code, which is what
/// [`Expr::eval`] runs.
///
/// PERF: evaluating the flat code takes about a third of the steps of walking the tree
/// (no pointer chasing, no recursion, a slot or number operand folded into its
/// operation); building a rules file's exact chain evaluates hundreds of thousands.
///
/// The tree and the code are shared between copies (PERF: a run's rules are a copy of the
/// file's with its parameters folded in; copying every expression's tree and code there
/// was a fiftieth of building a field battle's chain).
#[derive(Clone, PartialEq)]
pub struct Expr {
    node: Arc<Node>,
    code: Arc<[Op]>,
    /// How [`Expr::eval`] finds the value.
    way: Way,
}

/// How an expression is evaluated: the commonest shapes without running any code.
///
/// PERF: running code dispatches once per step on a jump the processor cannot foresee
/// (the next step's kind); in a field battle's chain those mispredicted jumps cost more
/// than the steps themselves. The shapes below are read straight from the frame: a
/// call site evaluating one expression over many branches takes the same path each time.
#[derive(Clone, Debug, PartialEq)]
enum Way {
    Int(i64),
    Slot(usize),
    /// `frame[a] op frame[b]`, `frame[a] op value`, `if(frame[c], frame[t], frame[e])`.
    SlotSlot(usize, BinOp, usize),
    SlotInt(usize, BinOp, i64),
    IfSlots(usize, usize, usize),
    /// `min(frame[a], frame[b])`, `max(frame[a], frame[b])`.
    MinSlots(usize, usize),
    MaxSlots(usize, usize),
    /// `frame[a] op leaf`: a slot's value changed by another slot or an `if` of slots.
    SlotLeaf(usize, BinOp, Leaf),
    /// `frame[a] op min(leaf, frame[s])` (`max` where the flag is set): "what is lost
    /// is at most what is left".
    SlotBounded(usize, BinOp, Leaf, usize, bool),
    /// Comparisons of slots with numbers joined by `or` (`Any`) or `and` (`All`), each
    /// a range test (an end condition: `a.sp == 0 or b.morale <= 0 or …`).
    Any(Arc<[InRange]>),
    All(Arc<[InRange]>),
    /// Code whose stack is at most [`SHALLOW`] deep.
    Shallow,
    Code,
    /// Code deeper than [`STACK`]: the tree is walked.
    Tree,
}

/// A value read straight from the frame: a slot, or an `if` of three slots.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Leaf {
    Slot(usize),
    If(usize, usize, usize),
}

impl Leaf {
    #[inline]
    fn of(self, frame: &[i64]) -> i64 {
        match self {
            Leaf::Slot(s) => frame[s],
            Leaf::If(c, t, e) => frame[if truth(frame[c]) { t } else { e }],
        }
    }
}

/// One comparison of a slot with a number as a range: true where `lo <= frame[slot] <=
/// hi` is `inside` (`!=` is the outside of a one-value range; an empty range is never
/// met).
#[derive(Clone, Copy, Debug, PartialEq)]
struct InRange {
    slot: usize,
    lo: i64,
    hi: i64,
    inside: bool,
}

impl InRange {
    /// `node` as a range test, where it is a slot compared with a number (either side),
    /// a bare slot (true where not 0) or `not` of one.
    fn of(node: &Node) -> Option<InRange> {
        let test = |slot: usize, op: BinOp, v: i64| {
            let (lo, hi, inside) = match op {
                BinOp::Eq => (v, v, true),
                BinOp::Ne => (v, v, false),
                BinOp::Lt => match v.checked_sub(1) {
                    Some(h) => (i64::MIN, h, true),
                    None => (i64::MAX, i64::MIN, true),
                },
                BinOp::Le => (i64::MIN, v, true),
                BinOp::Gt => match v.checked_add(1) {
                    Some(l) => (l, i64::MAX, true),
                    None => (i64::MAX, i64::MIN, true),
                },
                BinOp::Ge => (v, i64::MAX, true),
                _ => return None,
            };
            Some(InRange {
                slot,
                lo,
                hi,
                inside,
            })
        };
        // `v op x` read as `x op' v`.
        let mirrored = |op: BinOp| match op {
            BinOp::Lt => BinOp::Gt,
            BinOp::Le => BinOp::Ge,
            BinOp::Gt => BinOp::Lt,
            BinOp::Ge => BinOp::Le,
            other => other,
        };
        match node {
            Node::Slot(s) => test(*s, BinOp::Ne, 0),
            Node::Not(x) => match &**x {
                Node::Slot(s) => test(*s, BinOp::Eq, 0),
                _ => None,
            },
            Node::Binary(op, a, b) => match (&**a, &**b) {
                (Node::Slot(s), Node::Int(v)) => test(*s, *op, *v),
                (Node::Int(v), Node::Slot(s)) => test(*s, mirrored(*op), *v),
                _ => None,
            },
            _ => None,
        }
    }

    #[inline]
    fn met(&self, frame: &[i64]) -> bool {
        let x = frame[self.slot];
        ((self.lo <= x) & (x <= self.hi)) == self.inside
    }
}

/// The range tests joined by `join` (`and` or `or`) in `node`, at least two, where every
/// operand of the chain is one.
fn range_chain(node: &Node, join: BinOp) -> Option<Arc<[InRange]>> {
    fn walk(node: &Node, join: BinOp, out: &mut Vec<InRange>) -> bool {
        match node {
            Node::Binary(op, a, b) if *op == join => walk(a, join, out) && walk(b, join, out),
            other => InRange::of(other).map(|t| out.push(t)).is_some(),
        }
    }
    let mut tests = Vec::new();
    (walk(node, join, &mut tests) && tests.len() >= 2).then(|| tests.into())
}

impl fmt::Debug for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.node.fmt(f)
    }
}

impl Expr {
    /// The expression of a tree, its code laid out.
    pub fn new(node: Node) -> Self {
        let mut code = Vec::new();
        compile(&node, &mut code);
        let (mut depth, mut deepest) = (0usize, 0usize);
        for op in &code {
            match op {
                Op::Int(_) | Op::Slot(_) | Op::IfSlots(..) => depth += 1,
                Op::Bin(_) | Op::Min2 | Op::Max2 => depth -= 1,
                Op::Min(n) | Op::Max(n) => depth -= *n as usize - 1,
                Op::Clamp | Op::If => depth -= 2,
                Op::BinSlot(..)
                | Op::BinInt(..)
                | Op::BinIfSlots(..)
                | Op::MinSlot(_)
                | Op::MaxSlot(_)
                | Op::MinInt(_)
                | Op::MaxInt(_)
                | Op::ClampInts(..)
                | Op::Neg
                | Op::Not
                | Op::Abs => {}
            }
            deepest = deepest.max(depth);
        }
        let leaf_if = |c: u32, t: u32, e: u32| Leaf::If(c as usize, t as usize, e as usize);
        let way = match code[..] {
            [Op::Int(v)] => Way::Int(v),
            [Op::Slot(s)] => Way::Slot(s as usize),
            [Op::Slot(a), Op::BinSlot(op, b)] => Way::SlotSlot(a as usize, op, b as usize),
            [Op::Slot(a), Op::BinInt(op, v)] => Way::SlotInt(a as usize, op, v),
            [Op::IfSlots(c, t, e)] => Way::IfSlots(c as usize, t as usize, e as usize),
            [Op::Slot(a), Op::MinSlot(b)] => Way::MinSlots(a as usize, b as usize),
            [Op::Slot(a), Op::MaxSlot(b)] => Way::MaxSlots(a as usize, b as usize),
            [Op::Slot(a), Op::BinIfSlots(op, c, t, e)] => {
                Way::SlotLeaf(a as usize, op, leaf_if(c, t, e))
            }
            [Op::Slot(a), Op::Slot(b), bound @ (Op::MinSlot(s) | Op::MaxSlot(s)), Op::Bin(op)] => {
                let max = matches!(bound, Op::MaxSlot(_));
                Way::SlotBounded(a as usize, op, Leaf::Slot(b as usize), s as usize, max)
            }
            [Op::Slot(a), Op::IfSlots(c, t, e), bound @ (Op::MinSlot(s) | Op::MaxSlot(s)), Op::Bin(op)] =>
            {
                let max = matches!(bound, Op::MaxSlot(_));
                Way::SlotBounded(a as usize, op, leaf_if(c, t, e), s as usize, max)
            }
            _ => range_chain(&node, BinOp::Or)
                .map(Way::Any)
                .or_else(|| range_chain(&node, BinOp::And).map(Way::All))
                .unwrap_or(if deepest <= SHALLOW {
                    Way::Shallow
                } else if deepest <= STACK {
                    Way::Code
                } else {
                    Way::Tree
                }),
        };
        Self {
            node: Arc::new(node),
            code: code.into(),
            way,
        }
    }

    /// The expression's tree.
    pub fn node(&self) -> &Node {
        &self.node
    }

    /// The value of the expression on `frame` (every slot it names is in it: the
    /// parser resolved them). Saturating arithmetic; `x / 0` and `x % 0` are 0. The same
    /// value as the tree's [`Node::eval`] (held by a test).
    #[inline(always)]
    pub fn eval(&self, frame: &[i64]) -> i64 {
        match self.way {
            Way::Int(v) => v,
            Way::Slot(s) => frame[s],
            Way::SlotSlot(a, op, b) => apply(op, frame[a], frame[b]),
            Way::SlotInt(a, op, v) => apply(op, frame[a], v),
            Way::IfSlots(c, t, e) => frame[if truth(frame[c]) { t } else { e }],
            Way::MinSlots(a, b) => frame[a].min(frame[b]),
            Way::MaxSlots(a, b) => frame[a].max(frame[b]),
            Way::SlotLeaf(a, op, leaf) => apply(op, frame[a], leaf.of(frame)),
            Way::SlotBounded(a, op, leaf, s, max) => {
                let (x, y) = (leaf.of(frame), frame[s]);
                apply(op, frame[a], if max { x.max(y) } else { x.min(y) })
            }
            Way::Any(ref tests) => i64::from(tests.iter().any(|t| t.met(frame))),
            Way::All(ref tests) => i64::from(tests.iter().all(|t| t.met(frame))),
            Way::Shallow => self.run::<SHALLOW>(frame),
            Way::Code => self.run::<STACK>(frame),
            Way::Tree => self.node.eval(frame),
        }
    }

    /// Runs the expression's code on `frame`, with a stack of `N` (at least the code's
    /// deepest).
    #[inline(never)]
    fn run<const N: usize>(&self, frame: &[i64]) -> i64 {
        let mut stack = [0i64; N];
        let mut top = 0usize; // the number of values on the stack
        for op in self.code.iter() {
            match *op {
                Op::Int(v) => {
                    stack[top] = v;
                    top += 1;
                }
                Op::Slot(s) => {
                    stack[top] = frame[s as usize];
                    top += 1;
                }
                Op::BinSlot(op, s) => stack[top - 1] = apply(op, stack[top - 1], frame[s as usize]),
                Op::BinInt(op, v) => stack[top - 1] = apply(op, stack[top - 1], v),
                Op::Neg => stack[top - 1] = stack[top - 1].saturating_neg(),
                Op::Not => stack[top - 1] = i64::from(!truth(stack[top - 1])),
                Op::Abs => stack[top - 1] = stack[top - 1].saturating_abs(),
                Op::Bin(op) => {
                    top -= 1;
                    stack[top - 1] = apply(op, stack[top - 1], stack[top]);
                }
                Op::IfSlots(c, t, e) => {
                    stack[top] = frame[if truth(frame[c as usize]) { t } else { e } as usize];
                    top += 1;
                }
                Op::BinIfSlots(op, c, t, e) => {
                    let x = frame[if truth(frame[c as usize]) { t } else { e } as usize];
                    stack[top - 1] = apply(op, stack[top - 1], x);
                }
                Op::MinSlot(s) => stack[top - 1] = stack[top - 1].min(frame[s as usize]),
                Op::MaxSlot(s) => stack[top - 1] = stack[top - 1].max(frame[s as usize]),
                Op::MinInt(v) => stack[top - 1] = stack[top - 1].min(v),
                Op::MaxInt(v) => stack[top - 1] = stack[top - 1].max(v),
                Op::ClampInts(lo, hi) => stack[top - 1] = stack[top - 1].max(lo).min(hi.max(lo)),
                Op::Min2 => {
                    top -= 1;
                    stack[top - 1] = stack[top - 1].min(stack[top]);
                }
                Op::Max2 => {
                    top -= 1;
                    stack[top - 1] = stack[top - 1].max(stack[top]);
                }
                Op::Min(n) => {
                    let from = top - n as usize;
                    stack[from] = stack[from..top].iter().copied().min().unwrap_or(0);
                    top = from + 1;
                }
                Op::Max(n) => {
                    let from = top - n as usize;
                    stack[from] = stack[from..top].iter().copied().max().unwrap_or(0);
                    top = from + 1;
                }
                Op::Clamp => {
                    top -= 2;
                    let (v, lo, hi) = (stack[top - 1], stack[top], stack[top + 1]);
                    stack[top - 1] = v.max(lo).min(hi.max(lo));
                }
                Op::If => {
                    top -= 2;
                    if !truth(stack[top - 1]) {
                        stack[top - 1] = stack[top + 1];
                    } else {
                        stack[top - 1] = stack[top];
                    }
                }
            }
        }
        stack[0]
    }

    /// Bounds on every value the expression can take ([`Node::range`]).
    pub fn range(&self, scope: &dyn Scope) -> (i64, i64) {
        self.node.range(scope)
    }

    /// This expression with the slots below `fixed` read from `frame` ([`Node::folded`]).
    pub fn folded(&self, frame: &[i64], fixed: usize) -> Expr {
        Expr::new(self.node.folded(frame, fixed))
    }

    /// Every slot the expression reads.
    pub fn slots(&self, out: &mut Vec<usize>) {
        self.node.slots(out)
    }
}

/// The three slots of an `if` whose arguments are all slots.
fn if_slots(args: &[Node]) -> [u32; 3] {
    std::array::from_fn(|k| match args[k] {
        Node::Slot(s) => s as u32,
        _ => unreachable!("matched as slots"),
    })
}

/// Lays `node` out as postfix code. Every operand is computed (an `if`'s two sides, an
/// `and`'s right side): no expression has effects or can fail, so the value is the tree's.
fn compile(node: &Node, code: &mut Vec<Op>) {
    match node {
        Node::Int(v) => code.push(Op::Int(*v)),
        Node::Slot(s) => code.push(Op::Slot(*s as u32)),
        Node::Neg(x) => {
            compile(x, code);
            code.push(Op::Neg);
        }
        Node::Not(x) => {
            compile(x, code);
            code.push(Op::Not);
        }
        Node::Binary(op, a, b) => {
            compile(a, code);
            match &**b {
                Node::Slot(s) => code.push(Op::BinSlot(*op, *s as u32)),
                Node::Int(v) => code.push(Op::BinInt(*op, *v)),
                Node::Call(Func::If, args) if args.iter().all(|a| matches!(a, Node::Slot(_))) => {
                    let [c, t, e] = if_slots(args);
                    code.push(Op::BinIfSlots(*op, c, t, e));
                }
                _ => {
                    compile(b, code);
                    code.push(Op::Bin(*op));
                }
            }
        }
        Node::Call(Func::If, args) if args.iter().all(|a| matches!(a, Node::Slot(_))) => {
            let [c, t, e] = if_slots(args);
            code.push(Op::IfSlots(c, t, e));
        }
        // `clamp` between two numbers: one step on the value.
        Node::Call(Func::Clamp, args) if matches!(args[..], [_, Node::Int(_), Node::Int(_)]) => {
            let (Node::Int(lo), Node::Int(hi)) = (&args[1], &args[2]) else {
                unreachable!("matched as numbers")
            };
            compile(&args[0], code);
            code.push(Op::ClampInts(*lo, *hi));
        }
        // `min`/`max` of two whose second is a slot or a number: one step on the first.
        Node::Call(func @ (Func::Min | Func::Max), args)
            if args.len() == 2 && matches!(args[1], Node::Slot(_) | Node::Int(_)) =>
        {
            compile(&args[0], code);
            code.push(match (func, &args[1]) {
                (Func::Min, Node::Slot(s)) => Op::MinSlot(*s as u32),
                (Func::Max, Node::Slot(s)) => Op::MaxSlot(*s as u32),
                (Func::Min, Node::Int(v)) => Op::MinInt(*v),
                (_, Node::Int(v)) => Op::MaxInt(*v),
                (_, _) => unreachable!("matched as a slot or a number"),
            });
        }
        Node::Call(func, args) => {
            args.iter().for_each(|a| compile(a, code));
            code.push(match func {
                Func::Min if args.len() == 2 => Op::Min2,
                Func::Max if args.len() == 2 => Op::Max2,
                Func::Min => Op::Min(args.len() as u32),
                Func::Max => Op::Max(args.len() as u32),
                Func::Clamp => Op::Clamp,
                Func::Abs => Op::Abs,
                Func::If => Op::If,
            });
        }
    }
}

impl Node {
    /// The value of the expression on `frame` (every slot it names is in it: the
    /// parser resolved them). Saturating arithmetic; `x / 0` and `x % 0` are 0.
    pub fn eval(&self, frame: &[i64]) -> i64 {
        match self {
            Node::Int(v) => *v,
            Node::Slot(s) => frame[*s],
            Node::Neg(x) => x.eval(frame).saturating_neg(),
            Node::Not(x) => i64::from(!truth(x.eval(frame))),
            Node::Binary(op, a, b) => {
                let a = a.eval(frame);
                // `and`/`or` read their right side only when needed (no effects either way).
                match op {
                    BinOp::And => return i64::from(truth(a) && truth(b.eval(frame))),
                    BinOp::Or => return i64::from(truth(a) || truth(b.eval(frame))),
                    _ => {}
                }
                apply(*op, a, b.eval(frame))
            }
            Node::Call(func, args) => match func {
                Func::Min => args.iter().map(|x| x.eval(frame)).min().unwrap_or(0),
                Func::Max => args.iter().map(|x| x.eval(frame)).max().unwrap_or(0),
                Func::Clamp => {
                    let (v, lo, hi) = (
                        args[0].eval(frame),
                        args[1].eval(frame),
                        args[2].eval(frame),
                    );
                    v.max(lo).min(hi.max(lo))
                }
                Func::Abs => args[0].eval(frame).saturating_abs(),
                Func::If => {
                    if truth(args[0].eval(frame)) {
                        args[1].eval(frame)
                    } else {
                        args[2].eval(frame)
                    }
                }
            },
        }
    }

    /// Bounds on every value the expression can take when each slot stays in the range
    /// `scope` gives it (interval arithmetic: sound, not always tight).
    pub fn range(&self, scope: &dyn Scope) -> (i64, i64) {
        let clamp = |v: i128| v.clamp(i64::MIN as i128, i64::MAX as i128) as i64;
        match self {
            Node::Int(v) => (*v, *v),
            Node::Slot(s) => scope.range(*s),
            Node::Neg(x) => {
                let (lo, hi) = x.range(scope);
                (hi.saturating_neg(), lo.saturating_neg())
            }
            Node::Not(_) => (0, 1),
            Node::Binary(op, a, b) => {
                let (al, ah) = a.range(scope);
                let (bl, bh) = b.range(scope);
                let (al, ah, bl, bh) = (al as i128, ah as i128, bl as i128, bh as i128);
                match op {
                    BinOp::Add => (clamp(al + bl), clamp(ah + bh)),
                    BinOp::Sub => (clamp(al - bh), clamp(ah - bl)),
                    BinOp::Mul => {
                        let p = [al * bl, al * bh, ah * bl, ah * bh];
                        (
                            clamp(*p.iter().min().unwrap()),
                            clamp(*p.iter().max().unwrap()),
                        )
                    }
                    BinOp::Div => {
                        let m = al.abs().max(ah.abs());
                        (clamp(-m).min(0), clamp(m).max(0))
                    }
                    BinOp::Rem => {
                        let m = bl.abs().max(bh.abs());
                        (0, clamp(m - 1).max(0))
                    }
                    _ => (0, 1),
                }
            }
            Node::Call(func, args) => {
                let r: Vec<(i64, i64)> = args.iter().map(|x| x.range(scope)).collect();
                match func {
                    Func::Min => (
                        r.iter().map(|x| x.0).min().unwrap_or(0),
                        r.iter().map(|x| x.1).min().unwrap_or(0),
                    ),
                    Func::Max => (
                        r.iter().map(|x| x.0).max().unwrap_or(0),
                        r.iter().map(|x| x.1).max().unwrap_or(0),
                    ),
                    Func::Clamp => {
                        // clamp(v, lo, hi) is min(max(v, lo), max(hi, lo)): each bound
                        // from the same bound of its parts, whatever lo and hi can be
                        // (a lowest that can pass the highest wins, as eval has it).
                        let ((vl, vh), (ll, lh), (hl, hh)) = (r[0], r[1], r[2]);
                        (vl.max(ll).min(hl.max(ll)), vh.max(lh).min(hh.max(lh)))
                    }
                    Func::Abs => {
                        let (lo, hi) = r[0];
                        if lo >= 0 {
                            (lo, hi)
                        } else if hi <= 0 {
                            (hi.saturating_abs(), lo.saturating_abs())
                        } else {
                            (0, lo.saturating_abs().max(hi))
                        }
                    }
                    Func::If => (r[1].0.min(r[2].0), r[1].1.max(r[2].1)),
                }
            }
        }
    }

    /// This expression with every slot below `fixed` read from `frame` (the run's
    /// parameters and policies, which no round changes) and every part that reads no
    /// other slot computed: the same value as [`Node::eval`] for any frame that agrees with
    /// `frame` below `fixed`, found with fewer steps.
    pub fn folded(&self, frame: &[i64], fixed: usize) -> Node {
        let int = |e: &Node| match e {
            Node::Int(v) => Some(*v),
            _ => None,
        };
        match self {
            Node::Int(v) => Node::Int(*v),
            Node::Slot(s) if *s < fixed => Node::Int(frame[*s]),
            Node::Slot(s) => Node::Slot(*s),
            Node::Neg(x) | Node::Not(x) => {
                let x = x.folded(frame, fixed);
                let e = match self {
                    Node::Neg(_) => Node::Neg(Box::new(x)),
                    _ => Node::Not(Box::new(x)),
                };
                match &e {
                    Node::Neg(x) | Node::Not(x) if int(x).is_some() => Node::Int(e.eval(&[])),
                    _ => e,
                }
            }
            Node::Binary(op, a, b) => {
                let (a, b) = (a.folded(frame, fixed), b.folded(frame, fixed));
                match (op, int(&a), int(&b)) {
                    (_, Some(_), Some(_)) => {
                        Node::Int(Node::Binary(*op, Box::new(a), Box::new(b)).eval(&[]))
                    }
                    // `and`/`or` decided by their left side read no right side.
                    (BinOp::And, Some(x), None) if !truth(x) => Node::Int(0),
                    (BinOp::Or, Some(x), None) if truth(x) => Node::Int(1),
                    // Adding or taking away 0 (a DRM the run sets to 0) changes nothing.
                    (BinOp::Add, Some(0), None) => b,
                    (BinOp::Add | BinOp::Sub, None, Some(0)) => a,
                    _ => Node::Binary(*op, Box::new(a), Box::new(b)),
                }
            }
            Node::Call(func, args) => {
                let args: Vec<Node> = args.iter().map(|a| a.folded(frame, fixed)).collect();
                if args.iter().all(|a| int(a).is_some()) {
                    return Node::Int(Node::Call(*func, args).eval(&[]));
                }
                if *func == Func::If {
                    if let Some(c) = int(&args[0]) {
                        return args[if truth(c) { 1 } else { 2 }].clone();
                    }
                    if args[1] == args[2] {
                        return args[1].clone();
                    }
                }
                Node::Call(*func, args)
            }
        }
    }

    /// Whether the expression reads a slot below `fixed`.
    pub fn reads_below(&self, fixed: usize) -> bool {
        match self {
            Node::Int(_) => false,
            Node::Slot(s) => *s < fixed,
            Node::Neg(x) | Node::Not(x) => x.reads_below(fixed),
            Node::Binary(_, a, b) => a.reads_below(fixed) || b.reads_below(fixed),
            Node::Call(_, args) => args.iter().any(|a| a.reads_below(fixed)),
        }
    }

    /// Every slot the expression reads.
    pub fn slots(&self, out: &mut Vec<usize>) {
        match self {
            Node::Int(_) => {}
            Node::Slot(s) => out.push(*s),
            Node::Neg(x) | Node::Not(x) => x.slots(out),
            Node::Binary(_, a, b) => {
                a.slots(out);
                b.slots(out);
            }
            Node::Call(_, args) => args.iter().for_each(|a| a.slots(out)),
        }
    }
}

/// One effect of a result, in the order written.
#[derive(Clone, Debug, PartialEq)]
pub enum Statement {
    /// `target = value`, `+=`, `-=`: `value` is the new value (the compound forms are
    /// rewritten to `target + value` at parse time); held to the counter's range.
    Set { target: usize, value: Expr },
    /// `lose(side, n, c1, c2, …)`: takes `n` from `c1` down to its lowest, then from `c2` …
    Lose { amount: Expr, order: Vec<usize> },
    /// `end`: the battle ends after this phase.
    End,
    /// `roll <table>`: another table is rolled on and its result applied.
    Roll(String),
    /// `outcome <name>`: the battle, when it ends, is named so (whatever the outcomes'
    /// conditions say); the value is the outcome's position.
    Outcome(usize),
}

/// Names of counters that effects may set, besides those an expression may read.
pub trait EffectScope: Scope {
    /// The slot of counter `name` (`attacker.strength`), if it is one.
    fn counter(&self, name: &str) -> Option<usize>;
    /// Every counter's name.
    fn counters(&self) -> Vec<String>;
    /// The slot of `side`'s counter `counter`, for `lose`.
    fn side_counter(&self, side: &str, counter: &str) -> Option<usize>;
    /// The sides' keys.
    fn sides(&self) -> Vec<String>;
    /// The outcomes' names, in order.
    fn outcomes(&self) -> Vec<String>;
}

/// Parses one effect statement.
pub fn statement(text: &str, scope: &dyn EffectScope) -> Result<Statement, ExprError> {
    let trimmed = text.trim();
    if trimmed == "end" {
        return Ok(Statement::End);
    }
    if let Some(name) = trimmed.strip_prefix("outcome ") {
        let name = name.trim();
        let names = scope.outcomes();
        return names
            .iter()
            .position(|n| n == name)
            .map(Statement::Outcome)
            .ok_or_else(|| {
                ExprError(format!(
                    "unknown outcome \"{name}\"; outcomes: {}",
                    names.join(", ")
                ))
            });
    }
    if let Some(table) = trimmed.strip_prefix("roll ") {
        return Ok(Statement::Roll(table.trim().to_string()));
    }
    if let Some(inner) = trimmed
        .strip_prefix("lose(")
        .and_then(|rest| rest.strip_suffix(')'))
    {
        let parts: Vec<&str> = inner.split(',').map(str::trim).collect();
        if parts.len() < 3 {
            return Err(ExprError(
                "lose takes a side, how many, then the counters in the order they are lost: lose(attacker, hits, infantry, artillery, tank)".into(),
            ));
        }
        let side = parts[0];
        if !scope.sides().iter().any(|s| s == side) {
            return Err(ExprError(format!(
                "lose: unknown side `{side}`; sides: {}",
                scope.sides().join(", ")
            )));
        }
        let amount = parse(parts[1], scope)?;
        let mut order = Vec::new();
        for counter in &parts[2..] {
            let slot = scope.side_counter(side, counter).ok_or_else(|| {
                ExprError(format!(
                    "lose: `{counter}` is not a counter of {side}; counters: {}",
                    scope.counters().join(", ")
                ))
            })?;
            if order.contains(&slot) {
                return Err(ExprError(format!("lose: `{counter}` is named twice")));
            }
            order.push(slot);
        }
        return Ok(Statement::Lose { amount, order });
    }
    let toks = tokens(trimmed)?;
    let assign = toks
        .iter()
        .position(|t| matches!(t, Token::Op("=" | "+=" | "-=")));
    let Some(at) = assign else {
        return Err(ExprError(
            "an effect is `counter = value`, `counter += value`, `counter -= value`, `lose(side, n, counter, …)`, `roll <table>`, `outcome <name>` or `end`".into(),
        ));
    };
    let name = match &toks[..at] {
        [Token::Name(name)] => name.clone(),
        _ => {
            return Err(ExprError(
                "the left of `=` is one counter, e.g. `defender.strength`".into(),
            ))
        }
    };
    let target = scope.counter(&name).ok_or_else(|| {
        if scope.slot(&name).is_some() {
            ExprError(format!(
                "`{name}` is not a counter (a parameter or a roll's value cannot change); counters: {}",
                scope.counters().join(", ")
            ))
        } else {
            unknown_name(&name, &scope.counters())
        }
    })?;
    let op_len = match toks[at] {
        Token::Op(op) => op,
        _ => unreachable!("found as an operator"),
    };
    let split = trimmed.find(op_len).expect("the operator is in the text");
    let value = parse(&trimmed[split + op_len.len()..], scope)?;
    let value = match op_len {
        "+=" | "-=" => Expr::new(Node::Binary(
            if op_len == "+=" {
                BinOp::Add
            } else {
                BinOp::Sub
            },
            Box::new(Node::Slot(target)),
            Box::new(Arc::unwrap_or_clone(value.node)),
        )),
        _ => value,
    };
    Ok(Statement::Set { target, value })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Names(Vec<(&'static str, (i64, i64))>);

    impl Scope for Names {
        fn slot(&self, name: &str) -> Option<(usize, (i64, i64))> {
            self.0
                .iter()
                .position(|(n, _)| *n == name)
                .map(|i| (i, self.0[i].1))
        }
        fn names(&self) -> Vec<String> {
            self.0.iter().map(|(n, _)| n.to_string()).collect()
        }
        fn range(&self, slot: usize) -> (i64, i64) {
            self.0[slot].1
        }
    }

    fn scope() -> Names {
        Names(vec![
            ("attacker.strength", (0, 30)),
            ("defender.strength", (0, 30)),
            ("terrain", (0, 2)),
        ])
    }

    fn eval(text: &str, frame: &[i64]) -> i64 {
        parse(text, &scope()).unwrap().eval(frame)
    }

    #[test]
    fn arithmetic_follows_the_usual_precedence_and_floors() {
        let f = [7, 3, 2];
        assert_eq!(
            eval("attacker.strength - defender.strength * terrain", &f),
            1
        );
        assert_eq!(
            eval("(attacker.strength - defender.strength) * terrain", &f),
            8
        );
        assert_eq!(eval("attacker.strength / defender.strength", &f), 2);
        assert_eq!(eval("-7 / 2", &f), -4);
        assert_eq!(eval("7 / -2", &f), -4);
        assert_eq!(eval("-7 % 3", &f), 2);
        assert_eq!(eval("5 / 0", &f), 0);
        assert_eq!(eval("clamp(attacker.strength - 10, -2, 2)", &f), -2);
        assert_eq!(eval("min(3, attacker.strength - 1)", &f), 3);
        assert_eq!(eval("if(terrain == 2, 10, 20)", &f), 10);
        assert_eq!(eval("abs(defender.strength - attacker.strength)", &f), 4);
    }

    #[test]
    fn logic_reads_as_written() {
        let f = [1, 0, 0];
        assert_eq!(
            eval("attacker.strength <= 1 or defender.strength == 0", &f),
            1
        );
        assert_eq!(
            eval("attacker.strength > 1 and defender.strength == 0", &f),
            0
        );
        assert_eq!(eval("not terrain", &f), 1);
        assert_eq!(eval("true and not false", &f), 1);
    }

    #[test]
    fn ranges_bound_every_value() {
        let s = scope();
        let r = |t: &str| parse(t, &s).unwrap().range(&s);
        assert_eq!(r("attacker.strength - defender.strength"), (-30, 30));
        assert_eq!(
            r("clamp(attacker.strength - defender.strength, -2, 2)"),
            (-2, 2)
        );
        assert_eq!(r("min(3, attacker.strength - 1)"), (-1, 3));
        assert_eq!(r("terrain * -2"), (-4, 0));
        assert_eq!(r("attacker.strength >= 3"), (0, 1));
        // A clamp whose lowest can pass its highest reads as eval does: the lowest wins.
        assert_eq!(r("clamp(0, attacker.strength, 0)"), (0, 30));
        assert_eq!(
            r("clamp(5, -attacker.strength, -defender.strength)"),
            (-30, 0)
        );
    }

    /// Every value a random tree takes, on frames whose slots stay in their ranges (the
    /// corners and points between), lies within the range the tree claims: the checks
    /// that cap a pool's dice or a metric's values read these ranges.
    #[test]
    fn ranges_hold_every_value_of_random_trees() {
        struct Ranges([(i64, i64); 4]);
        impl Scope for Ranges {
            fn slot(&self, _: &str) -> Option<(usize, (i64, i64))> {
                None
            }
            fn names(&self) -> Vec<String> {
                Vec::new()
            }
            fn range(&self, slot: usize) -> (i64, i64) {
                self.0[slot]
            }
        }
        let ranges = Ranges([(-3, 5), (0, 10), (-10, -2), (0, 0)]);
        let points = |(lo, hi): (i64, i64)| [lo, hi, (lo + hi) / 2, lo + 1, hi - 1];
        let mut frames = Vec::new();
        for a in points(ranges.0[0]) {
            for b in points(ranges.0[1]) {
                for c in points(ranges.0[2]) {
                    frames.push([a, b, c, 0]);
                }
            }
        }
        let mut state = 11u64;
        for _ in 0..4000 {
            let node = random_node(&mut state, 5);
            let (lo, hi) = node.range(&ranges);
            for frame in &frames {
                let v = node.eval(frame);
                assert!(
                    lo <= v && v <= hi,
                    "{node:?} on {frame:?} is {v}, outside its range {lo} to {hi}"
                );
            }
        }
    }

    /// Every binary operation, for the generated trees.
    const OPS: [BinOp; 13] = [
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
        BinOp::Rem,
        BinOp::Eq,
        BinOp::Ne,
        BinOp::Lt,
        BinOp::Le,
        BinOp::Gt,
        BinOp::Ge,
        BinOp::And,
        BinOp::Or,
    ];

    /// A random tree of depth at most `depth` over slots 0..4 (a fixed generator: the
    /// same trees every run).
    fn random_node(state: &mut u64, depth: usize) -> Node {
        let mut next = |n: u64| {
            *state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (*state >> 33) % n
        };
        let leaf = depth == 0 || next(4) == 0;
        if leaf {
            return if next(2) == 0 {
                Node::Int(next(21) as i64 - 10)
            } else {
                Node::Slot(next(4) as usize)
            };
        }
        match next(5) {
            0 => Node::Neg(Box::new(random_node(state, depth - 1))),
            1 => Node::Not(Box::new(random_node(state, depth - 1))),
            2 | 3 => {
                let op = OPS[next(13) as usize];
                Node::Binary(
                    op,
                    Box::new(random_node(state, depth - 1)),
                    Box::new(random_node(state, depth - 1)),
                )
            }
            _ => {
                let (func, n) = match next(5) {
                    0 => (Func::Min, 1 + next(3) as usize),
                    1 => (Func::Max, 1 + next(3) as usize),
                    2 => (Func::Clamp, 3),
                    3 => (Func::Abs, 1),
                    _ => (Func::If, 3),
                };
                Node::Call(
                    func,
                    (0..n).map(|_| random_node(state, depth - 1)).collect(),
                )
            }
        }
    }

    #[test]
    fn the_flat_code_computes_what_the_tree_does() {
        let mut state = 7u64;
        let frames: [[i64; 4]; 4] = [
            [0, 0, 0, 0],
            [3, -2, 7, 1],
            [-5, 4, 0, 12],
            [i64::MAX, i64::MIN, 2, -1],
        ];
        let mut deep = 0;
        for _ in 0..4000 {
            let node = random_node(&mut state, 6);
            let expr = Expr::new(node.clone());
            deep += usize::from(expr.way == Way::Tree);
            for frame in &frames {
                assert_eq!(expr.eval(frame), node.eval(frame), "{node:?} on {frame:?}");
            }
        }
        // Every shape of code is met: most trees run as code, a few too deep walk.
        assert!(
            deep < 4000 / 2,
            "{deep} of 4000 trees were too deep for the code"
        );
        // A tree deeper than the code's stack still evaluates (by walking it).
        let mut wide = Node::Int(1);
        for k in 0..40 {
            wide = Node::Binary(BinOp::Sub, Box::new(Node::Int(k)), Box::new(wide));
        }
        let expr = Expr::new(wide.clone());
        assert_eq!(expr.way, Way::Tree);
        assert_eq!(expr.eval(&[]), wide.eval(&[]));
    }

    /// The shapes read straight from the frame ([`Way`]) give what the tree does, on
    /// every operation and comparison, with numbers at the edges of 64 bits.
    #[test]
    fn shapes_read_from_the_frame_give_what_the_tree_does() {
        const VALUES: [i64; 8] = [i64::MIN, -3, -1, 0, 1, 2, 5, i64::MAX];
        let slot = |s: usize| Box::new(Node::Slot(s));
        let call = |f: Func, args: Vec<Node>| Node::Call(f, args);
        let if_slots = || call(Func::If, vec![Node::Slot(1), Node::Slot(2), Node::Slot(3)]);
        let mut cases: Vec<(Node, &str)> = Vec::new();
        for op in OPS {
            cases.push((call(Func::Min, vec![Node::Slot(0), Node::Slot(1)]), "min"));
            cases.push((call(Func::Max, vec![Node::Slot(2), Node::Slot(0)]), "max"));
            cases.push((Node::Binary(op, slot(0), Box::new(if_slots())), "leaf"));
            for (f, name) in [(Func::Min, "bounded"), (Func::Max, "bounded")] {
                for inner in [Node::Slot(1), if_slots()] {
                    let bound = call(f, vec![inner, Node::Slot(3)]);
                    cases.push((Node::Binary(op, slot(0), Box::new(bound)), name));
                }
            }
        }
        // Chains of comparisons with numbers (either side), bare slots and `not`.
        let mut state = 5u64;
        let mut next = |n: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        for _ in 0..400 {
            let join = if next(2) == 0 { BinOp::Or } else { BinOp::And };
            let mut chain: Option<Node> = None;
            for _ in 0..2 + next(4) {
                let s = next(4) as usize;
                let test = match next(8) {
                    0 => Node::Slot(s),
                    1 => Node::Not(slot(s)),
                    k => {
                        let op = OPS[5 + next(6) as usize];
                        let v = Box::new(Node::Int(VALUES[next(8) as usize]));
                        if k % 2 == 0 {
                            Node::Binary(op, slot(s), v)
                        } else {
                            Node::Binary(op, v, slot(s))
                        }
                    }
                };
                chain = Some(match chain {
                    None => test,
                    Some(c) if next(2) == 0 => Node::Binary(join, Box::new(c), Box::new(test)),
                    Some(c) => Node::Binary(join, Box::new(test), Box::new(c)),
                });
            }
            let name = if join == BinOp::Or { "any" } else { "all" };
            cases.push((chain.expect("two tests or more"), name));
        }
        for (node, shape) in cases {
            let expr = Expr::new(node.clone());
            let read = match expr.way {
                Way::MinSlots(..) => "min",
                Way::MaxSlots(..) => "max",
                Way::SlotLeaf(..) => "leaf",
                Way::SlotBounded(..) => "bounded",
                Way::Any(_) => "any",
                Way::All(_) => "all",
                // `a and b` of two slots: the shape of two slots, as good.
                Way::SlotSlot(..)
                    if matches!(node, Node::Binary(_, ref a, ref b)
                    if matches!((&**a, &**b), (Node::Slot(_), Node::Slot(_)))) =>
                {
                    shape
                }
                _ => "code",
            };
            assert_eq!(read, shape, "{node:?} is read as {:?}", expr.way);
            for a in VALUES {
                for b in VALUES {
                    for c in [0, 1, -1, i64::MAX] {
                        let frame = [a, b, c, b.wrapping_add(c)];
                        assert_eq!(
                            expr.eval(&frame),
                            node.eval(&frame),
                            "{node:?} on {frame:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_long_sum_is_read_and_a_deeper_tree_refused() {
        // A modifier of 100 terms: 1 + 2 + … + 100.
        let sum: Vec<String> = (1..=100).map(|k| k.to_string()).collect();
        assert_eq!(eval(&sum.join(" + "), &[]), 5050);
        let deep = format!("{}1", "-".repeat(MAX_DEPTH + 1));
        let error = parse(&deep, &scope()).unwrap_err().0;
        assert!(
            error.starts_with("an expression nested more than 256 deep"),
            "{error}"
        );
        let within = format!("{}1", "-".repeat(MAX_DEPTH - 1));
        assert_eq!(parse(&within, &scope()).unwrap().eval(&[]), -1);
    }

    #[test]
    fn bad_expressions_say_what_is_allowed() {
        let s = scope();
        let e = |t: &str| parse(t, &s).unwrap_err().0;
        assert!(
            e("attacker.strenght + 1").contains("did you mean `attacker.strength`"),
            "{}",
            e("attacker.strenght + 1")
        );
        assert!(e("terrain = 1").contains("write `==`"));
        assert!(e("1 < terrain < 3").contains("do not chain"));
        assert!(e("max(").contains("ends too early") || e("max(").contains("without"));
        assert!(e("sqrt(4)").contains("unknown function"));
        assert!(e("2 $ 3").contains("unexpected `$`"));
        assert!(e("clamp(1, 2)").contains("three values"));
        assert!(e("1 2").contains("after a complete expression"));
        assert!(e("").contains("empty"));
    }
}
