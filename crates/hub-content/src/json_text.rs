//! Edits of a stored document's JSON text without building the document: where its values
//! end, and a copy of the text with some spans cut or replaced.
//!
//! Parsing a 5 KB document into a tree and writing it out again costs several times what
//! sending the stored text does. The edits a response needs most (the language projection,
//! the reduction of closed parts) remove or change a few members, so they are made on the
//! text: everything else is copied byte for byte. On the compact text the store keeps, an
//! edit gives the same bytes as the parse, change and write it replaces.
//!
//! Owns: the scanning primitives and the rule for cutting a member with its comma. Must
//! not: decide which members to cut (`language_text`, `closed`). Malformed text is reported
//! as `None` wherever it is noticed; callers then take the parsed path, whose errors stand.

use std::borrow::Cow;

/// The position after the whitespace at `at`.
pub(crate) fn skip_space(bytes: &[u8], at: usize) -> usize {
    at + bytes[at.min(bytes.len())..]
        .iter()
        .take_while(|b| b.is_ascii_whitespace())
        .count()
}

/// The end of the string whose opening quote is at `open`. Strings are most of a
/// document's bytes, so the search jumps from one quote or backslash to the next.
pub(crate) fn string_end(bytes: &[u8], open: usize) -> Option<usize> {
    let mut at = open + 1;
    loop {
        at += memchr::memchr2(b'"', b'\\', bytes.get(at..)?)?;
        match bytes[at] {
            b'"' => return Some(at + 1),
            _ => at += 2, // an escape: the byte after the backslash is never the end
        }
    }
}

/// The end of a number, `true`, `false` or `null` starting at `start`.
pub(crate) fn scalar_end(bytes: &[u8], start: usize) -> Option<usize> {
    let len = bytes[start..]
        .iter()
        .take_while(|b| !matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
        .count();
    (len > 0).then_some(start + len)
}

/// The end of the value at `at` (after leading space), skipped whole: brackets are
/// counted outside strings, and what lies between them is not checked.
pub(crate) fn value_end(bytes: &[u8], at: usize) -> Option<usize> {
    let start = skip_space(bytes, at);
    match *bytes.get(start)? {
        b'"' => string_end(bytes, start),
        b'{' | b'[' => {
            let (mut depth, mut at) = (0usize, start);
            loop {
                match *bytes.get(at)? {
                    b'"' => at = string_end(bytes, at)? - 1,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(at + 1);
                        }
                    }
                    _ => {}
                }
                at += 1;
            }
        }
        _ => scalar_end(bytes, start),
    }
}

/// An object key (a string token, quotes included) as the text it stands for: escapes
/// decoded, when it has any.
pub(crate) fn key(token: &str) -> Option<Cow<'_, str>> {
    let raw = token.get(1..token.len().checked_sub(1)?)?;
    match raw.contains('\\') {
        true => serde_json::from_str(token).ok().map(Cow::Owned),
        false => Some(Cow::Borrowed(raw)),
    }
}

/// One member of an object, as positions in the text.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Member {
    pub key_start: usize,
    pub key_end: usize,
    /// Just after the `:`.
    pub value_at: usize,
}

impl Member {
    /// The member starting at `at` (its key's opening quote).
    pub(crate) fn at(bytes: &[u8], at: usize) -> Option<Member> {
        if *bytes.get(at)? != b'"' {
            return None;
        }
        let key_end = string_end(bytes, at)?;
        let colon = skip_space(bytes, key_end);
        (*bytes.get(colon)? == b':').then_some(Member {
            key_start: at,
            key_end,
            value_at: colon + 1,
        })
    }
}

/// What follows a member's value ending at `value_end`: the next member's start, or `None`
/// with the end of the object's closing brace.
fn after_member(bytes: &[u8], value_end: usize) -> Option<Result<usize, usize>> {
    let after = skip_space(bytes, value_end);
    match *bytes.get(after)? {
        b',' => Some(Ok(skip_space(bytes, after + 1))),
        b'}' => Some(Err(after + 1)),
        _ => None,
    }
}

/// The first member's start of the object whose `{` is at `open`, or `None` with the end
/// of an empty object.
fn first_member(bytes: &[u8], open: usize) -> Option<Result<usize, usize>> {
    let at = skip_space(bytes, open + 1);
    match *bytes.get(at)? {
        b'}' => Some(Err(at + 1)),
        _ => Some(Ok(at)),
    }
}

/// Walks the object whose `{` is at `open`: `member(m)` takes each member and returns where
/// its value ends. Returns the end of the object's `}`, or `None` when a member or a
/// separator is not JSON this walk reads.
pub(crate) fn members(
    bytes: &[u8],
    open: usize,
    mut member: impl FnMut(Member) -> Option<usize>,
) -> Option<usize> {
    let mut next = first_member(bytes, open)?;
    loop {
        match next {
            Ok(at) => next = after_member(bytes, member(Member::at(bytes, at)?)?)?,
            Err(close_end) => return Some(close_end),
        }
    }
}

/// Walks the array whose `[` is at `open`: `element(index, at)` takes each element's start
/// (after space) and returns where that element ends. Returns the end of the array's `]`,
/// or `None` when an element or a separator is not JSON this walk reads.
pub(crate) fn elements(
    bytes: &[u8],
    open: usize,
    mut element: impl FnMut(usize, usize) -> Option<usize>,
) -> Option<usize> {
    let mut at = skip_space(bytes, open + 1);
    if *bytes.get(at)? == b']' {
        return Some(at + 1);
    }
    for index in 0.. {
        let end = skip_space(bytes, element(index, skip_space(bytes, at))?);
        match *bytes.get(end)? {
            b',' => at = end + 1,
            b']' => return Some(end + 1),
            _ => return None,
        }
    }
    None
}

/// The members of the object `text` is, as keys and value texts; `None` when it is not an
/// object this walk reads.
pub(crate) fn object_members(text: &str) -> Option<Vec<(Cow<'_, str>, &str)>> {
    let bytes = text.as_bytes();
    let open = skip_space(bytes, 0);
    if *bytes.get(open)? != b'{' {
        return None;
    }
    let mut found = Vec::new();
    let close_end = members(bytes, open, |member| {
        let start = skip_space(bytes, member.value_at);
        let end = value_end(bytes, start)?;
        found.push((
            key(&text[member.key_start..member.key_end])?,
            &text[start..end],
        ));
        Some(end)
    })?;
    (skip_space(bytes, close_end) == bytes.len()).then_some(found)
}

/// The value text of the member named `name` among [`object_members`]' members; a key
/// written twice counts by its last value, as in a parsed object.
pub(crate) fn member<'t>(members: &[(Cow<'_, str>, &'t str)], name: &str) -> Option<&'t str> {
    members
        .iter()
        .rev()
        .find(|(key, _)| key == name)
        .map(|(_, value)| *value)
}

/// The element texts of the array `text` is; `None` when it is not an array.
pub(crate) fn array_items(text: &str) -> Option<Vec<&str>> {
    let bytes = text.as_bytes();
    if *bytes.first()? != b'[' {
        return None;
    }
    let mut items = Vec::new();
    let end = elements(bytes, 0, |_, at| {
        let end = value_end(bytes, at)?;
        items.push(&text[at..end]);
        Some(end)
    })?;
    (end == bytes.len()).then_some(items)
}

/// A copy of `text` with spans cut out or replaced, in increasing order.
pub(crate) struct Splice<'a> {
    text: &'a str,
    out: String,
    /// Bytes of `text` already accounted for in `out`.
    copied: usize,
    changed: bool,
}

impl<'a> Splice<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Splice {
            text,
            out: String::new(),
            copied: 0,
            changed: false,
        }
    }

    /// Replaces `start..end` by `with`; spans come in order and do not overlap.
    pub(crate) fn replace(&mut self, start: usize, end: usize, with: &str) {
        if self.out.capacity() == 0 {
            self.out.reserve(self.text.len());
        }
        self.out.push_str(&self.text[self.copied..start]);
        self.out.push_str(with);
        self.copied = end;
        self.changed = true;
    }

    /// The edited text; borrowed when nothing changed.
    pub(crate) fn finish(mut self) -> Cow<'a, str> {
        match self.changed {
            true => {
                self.out.push_str(&self.text[self.copied..]);
                Cow::Owned(self.out)
            }
            false => Cow::Borrowed(self.text),
        }
    }
}

/// Cuts members out of one object, each with the comma that separates it: the one before
/// it when a kept member precedes it, else the one after it. So `{"a":1,"b":2}` loses
/// `"a":1,` or `,"b":2`, and an object whose every member is cut is left `{}`.
///
/// For each member in turn: [`MemberCuts::start`] before anything inside its value is
/// edited, then [`MemberCuts::member`] once its value's end is known; [`MemberCuts::finish`]
/// after the last. A member cut with the comma after it goes when the next one starts, so
/// the walk needs no look-ahead and the spans stay in order.
#[derive(Debug, Default)]
pub(crate) struct MemberCuts {
    kept_before: bool,
    /// Where the previous member's value ended.
    previous_end: Option<usize>,
    /// The key of a member cut with the comma after it, not yet removed.
    pending: Option<usize>,
}

impl MemberCuts {
    /// A member starts: a member cut with the comma after it goes, up to this one's key.
    pub(crate) fn start(&mut self, splice: &mut Splice, member: Member) {
        if let Some(start) = self.pending.take() {
            splice.replace(start, member.key_start, "");
        }
    }

    /// The member whose value ends at `value_end`, cut when `cut`.
    pub(crate) fn member(
        &mut self,
        splice: &mut Splice,
        member: Member,
        value_end: usize,
        cut: bool,
    ) {
        match (cut, self.kept_before, self.previous_end) {
            (false, ..) => self.kept_before = true,
            (true, true, Some(previous_end)) => splice.replace(previous_end, value_end, ""),
            (true, ..) => self.pending = Some(member.key_start),
        }
        self.previous_end = Some(value_end);
    }

    /// The object closed: a member cut with no member after it goes up to its value's end.
    pub(crate) fn finish(self, splice: &mut Splice) {
        if let (Some(start), Some(end)) = (self.pending, self.previous_end) {
            splice.replace(start, end, "");
        }
    }
}
