//! The XMP an output keeps of its input's: what a photographer files and credits by in a
//! catalogue (the title, the description, the keywords and Lightroom's hierarchy of them, the
//! creators, the rights, the star rating and the colour label), read from the input's XMP
//! packet (a JPEG's `APP1`, a PNG's `iTXt`, a TIFF's tag 700, a WebP's `XMP ` chunk) and written
//! as a packet of graylab's own ([`Xmp::packet`]).
//!
//! Dropped on purpose, as EXIF drops them ([`crate::io::exif`]): the location (`exif:GPS…`,
//! IPTC's location), a raw editor's develop settings (`crs:…`: a crop or a colour it would apply
//! again to the gray pixels), and what describes the stored pixels (`tiff:Orientation`, sizes,
//! colour space). A packet is read as text, not trusted: what does not parse is skipped.

use std::borrow::Cow;

/// The namespaces of the kept properties.
const DC: &str = "http://purl.org/dc/elements/1.1/";
const XMP_BASIC: &str = "http://ns.adobe.com/xap/1.0/";
const LIGHTROOM: &str = "http://ns.adobe.com/lightroom/1.0/";
const RDF: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#";
/// What an XMP packet follows in a JPEG's `APP1` segment: its namespace, NUL-terminated.
pub(in crate::io) const JPEG_NAMESPACE: &[u8] = b"http://ns.adobe.com/xap/1.0/\0";
/// A longer packet is not read.
pub(in crate::io) const MAX_PACKET_BYTES: usize = 1 << 20;
/// The kept values' bytes in all, as written (escaped, each with [`MARKUP_BYTES`]): past it,
/// further values are dropped, so that the packet fits a JPEG's `APP1` segment (64 KiB).
const MAX_TEXT_BYTES: usize = 48 << 10;
/// What each kept value is charged for the markup around it.
const MARKUP_BYTES: usize = 40;

/// The XMP properties an output keeps, each value as the input gave it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Xmp {
    /// `dc:title`, `dc:description` and `dc:rights`: each a list of (language, text).
    alts: [Vec<(String, String)>; 3],
    /// `dc:creator` (in order), `dc:subject` (the keywords) and `lr:hierarchicalSubject` (the
    /// keywords with their parents, "Places|France|Paris", as Lightroom files them).
    lists: [Vec<String>; 3],
    /// `xmp:Rating`: -1 (rejected) or 0 to 5 stars.
    rating: Option<i8>,
    /// `xmp:Label`: the colour label.
    label: Option<String>,
}

/// The language-alternative properties, in the order of [`Xmp::alts`].
const ALTS: [&str; 3] = ["title", "description", "rights"];
/// The ordered and unordered lists, in the order of [`Xmp::lists`]: their namespace's prefix
/// (as written), name and RDF container.
const LISTS: [(&str, &str, &str); 3] =
    [("dc", "creator", "Seq"), ("dc", "subject", "Bag"), ("lr", "hierarchicalSubject", "Bag")];

/// What an element being read is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Property {
    Alt(usize),
    List(usize),
    Rating,
    Label,
}

impl Xmp {
    /// The kept properties of an XMP packet (UTF-8 text); `None` when it is not UTF-8, is longer
    /// than 1 MiB or keeps nothing.
    #[must_use]
    pub fn kept(packet: &[u8]) -> Option<Self> {
        if packet.len() > MAX_PACKET_BYTES {
            return None;
        }
        let text = std::str::from_utf8(packet).ok()?;
        let names = Names::of(text)?;
        let mut kept = Self::default();
        let mut budget = MAX_TEXT_BYTES;
        let mut reading: Option<Reading> = None;
        let mut depth = 0usize;
        for token in Tokens(text) {
            match token {
                Token::Start { name, attrs, empty } => {
                    for (attr, value) in attributes(attrs) {
                        match names.property(attr) {
                            Some(Property::Rating) => kept.set_rating(&value),
                            Some(Property::Label) => kept.set_label(&value, &mut budget),
                            _ => {}
                        }
                    }
                    match &mut reading {
                        None if !empty => {
                            reading = names.property(name).map(|property| Reading::new(property, depth));
                        }
                        Some(r) if name == names.li && !empty => {
                            let lang = attributes(attrs).find(|(a, _)| *a == "xml:lang").map(|(_, v)| v);
                            let lang = lang.map_or_else(
                                || "x-default".into(),
                                |l| l.chars().filter(|&c| allowed(c)).collect(),
                            );
                            r.item = Some((lang, String::new()));
                        }
                        _ => {}
                    }
                    depth += usize::from(!empty);
                }
                Token::End(name) => {
                    depth = depth.saturating_sub(1);
                    let Some(r) = &mut reading else { continue };
                    if name == names.li {
                        if let Some(item) = r.item.take() {
                            r.items.push(item);
                        }
                    } else if depth == r.depth
                        && let Some(r) = reading.take()
                    {
                        kept.take(r, &mut budget);
                    }
                }
                Token::Text(text) => match &mut reading {
                    Some(Reading { item: Some((_, item)), .. }) => {
                        item.extend(text.chars().filter(|&c| allowed(c)));
                    }
                    Some(r) => r.direct.extend(text.chars().filter(|&c| allowed(c))),
                    None => {}
                },
            }
        }
        (kept != Self::default()).then_some(kept)
    }

    /// How many properties are kept.
    #[must_use]
    pub fn properties(&self) -> usize {
        let filled = self.alts.iter().filter(|a| !a.is_empty()).count()
            + self.lists.iter().filter(|l| !l.is_empty()).count();
        filled + usize::from(self.rating.is_some()) + usize::from(self.label.is_some())
    }

    /// The packet graylab writes: the kept properties, in UTF-8, without padding.
    #[must_use]
    pub fn packet(&self) -> Vec<u8> {
        use std::fmt::Write as _;
        // Writing into a `String` cannot fail.
        let mut out = format!(
            "<?xpacket begin=\"\u{feff}\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\n\
             <x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF xmlns:rdf=\"{RDF}\">\n\
             <rdf:Description rdf:about=\"\" xmlns:dc=\"{DC}\" xmlns:xmp=\"{XMP_BASIC}\""
        );
        if !self.lists[2].is_empty() {
            let _ = write!(out, " xmlns:lr=\"{LIGHTROOM}\"");
        }
        if let Some(rating) = self.rating {
            let _ = write!(out, " xmp:Rating=\"{rating}\"");
        }
        if let Some(label) = &self.label {
            let _ = write!(out, " xmp:Label=\"{}\"", escaped(label));
        }
        out.push_str(">\n");
        for (name, values) in ALTS.iter().zip(&self.alts).filter(|(_, v)| !v.is_empty()) {
            let _ = write!(out, "<dc:{name}><rdf:Alt>");
            for (lang, text) in values {
                let _ = write!(out, "<rdf:li xml:lang=\"{}\">{}</rdf:li>", escaped(lang), escaped(text));
            }
            let _ = writeln!(out, "</rdf:Alt></dc:{name}>");
        }
        for ((ns, name, container), values) in LISTS.iter().zip(&self.lists).filter(|(_, v)| !v.is_empty()) {
            let _ = write!(out, "<{ns}:{name}><rdf:{container}>");
            for value in values {
                let _ = write!(out, "<rdf:li>{}</rdf:li>", escaped(value));
            }
            let _ = writeln!(out, "</rdf:{container}></{ns}:{name}>");
        }
        out.push_str("</rdf:Description>\n</rdf:RDF></x:xmpmeta>\n<?xpacket end=\"w\"?>");
        out.into_bytes()
    }

    /// Keeps a rating of -1 to 5 (a whole number, as Lightroom and darktable write it).
    fn set_rating(&mut self, value: &str) {
        self.rating = value.trim().parse::<i8>().ok().filter(|r| (-1..=5).contains(r)).or(self.rating);
    }

    /// Keeps a label within `budget`.
    fn set_label(&mut self, value: &str, budget: &mut usize) {
        let value: String = value.trim().chars().filter(|&c| allowed(c)).collect();
        if !value.is_empty() && self.label.is_none() && spend(budget, &value) {
            self.label = Some(value);
        }
    }

    /// Keeps what an element read, within `budget`: the first of a property given twice.
    fn take(&mut self, read: Reading, budget: &mut usize) {
        let Reading { property, mut items, direct, .. } = read;
        // A value written straight into the element, without its RDF container.
        if items.is_empty() && !direct.trim().is_empty() {
            items.push(("x-default".into(), direct.trim().to_owned()));
        }
        let items = items.into_iter().filter(|(_, text)| !text.is_empty());
        match property {
            Property::Alt(k) if self.alts[k].is_empty() => {
                self.alts[k] =
                    items.filter(|(lang, text)| spend(budget, lang) && spend(budget, text)).collect();
            }
            Property::List(k) if self.lists[k].is_empty() => {
                self.lists[k] = items.map(|(_, text)| text).filter(|text| spend(budget, text)).collect();
            }
            Property::Rating => self.set_rating(&direct),
            Property::Label => self.set_label(&direct, budget),
            _ => {}
        }
    }
}

/// Takes what `text` costs written from `budget`; `false`, leaving it, where it does not fit.
fn spend(budget: &mut usize, text: &str) -> bool {
    let cost = escaped(text).len() + MARKUP_BYTES;
    let fits = cost <= *budget;
    if fits {
        *budget -= cost;
    }
    fits
}

/// An element of a kept property being read, opened at `depth`.
struct Reading {
    property: Property,
    depth: usize,
    /// The `rdf:li` being read: its language and text.
    item: Option<(String, String)>,
    /// The `rdf:li` read.
    items: Vec<(String, String)>,
    /// Text outside any `rdf:li`.
    direct: String,
}

impl Reading {
    fn new(property: Property, depth: usize) -> Self {
        Self { property, depth, item: None, items: Vec::new(), direct: String::new() }
    }
}

/// The qualified names of the kept properties, by the prefixes the packet declares.
struct Names {
    dc: String,
    xmp: String,
    lr: String,
    li: String,
}

impl Names {
    /// The prefixes of the Dublin Core, XMP basic, Lightroom and RDF namespaces in `text`;
    /// `None` where it declares none of the first three.
    fn of(text: &str) -> Option<Self> {
        let prefix = |uri: &str| {
            Tokens(text).find_map(|token| match token {
                Token::Start { attrs, .. } => attributes(attrs)
                    .find(|(name, value)| name.starts_with("xmlns:") && value == uri)
                    .map(|(name, _)| name["xmlns:".len()..].to_owned()),
                _ => None,
            })
        };
        let (dc, xmp, lr) = (prefix(DC), prefix(XMP_BASIC), prefix(LIGHTROOM));
        if dc.is_none() && xmp.is_none() && lr.is_none() {
            return None;
        }
        let li = format!("{}:li", prefix(RDF).unwrap_or_else(|| "rdf".into()));
        let [dc, xmp, lr] = [dc, xmp, lr].map(Option::unwrap_or_default);
        Some(Self { dc, xmp, lr, li })
    }

    /// The kept property `name` stands for.
    fn property(&self, name: &str) -> Option<Property> {
        let (prefix, local) = name.split_once(':')?;
        let list = |ns: &str| LISTS.iter().position(|&(n, l, _)| n == ns && l == local).map(Property::List);
        if prefix == self.dc {
            ALTS.iter().position(|&a| a == local).map(Property::Alt).or_else(|| list("dc"))
        } else if prefix == self.lr {
            list("lr")
        } else if prefix == self.xmp {
            match local {
                "Rating" => Some(Property::Rating),
                "Label" => Some(Property::Label),
                _ => None,
            }
        } else {
            None
        }
    }
}

/// A piece of XML: a start tag (its name, its attributes unparsed, whether it closes itself),
/// an end tag's name, or text (entities resolved).
enum Token<'a> {
    Start { name: &'a str, attrs: &'a str, empty: bool },
    End(&'a str),
    Text(Cow<'a, str>),
}

/// The tokens of an XML text; comments, processing instructions and declarations skipped. It
/// ends at the first tag left open.
struct Tokens<'a>(&'a str);

impl<'a> Iterator for Tokens<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        loop {
            let rest = self.0;
            if rest.is_empty() {
                return None;
            }
            let Some(tag) = rest.strip_prefix('<') else {
                let end = rest.find('<').unwrap_or(rest.len());
                self.0 = &rest[end..];
                return Some(Token::Text(unescaped(&rest[..end])));
            };
            if let Some(cdata) = tag.strip_prefix("![CDATA[") {
                let (text, after) = cdata.split_once("]]>")?;
                self.0 = after;
                return Some(Token::Text(Cow::Borrowed(text)));
            }
            let skipped =
                [("!--", "-->"), ("?", "?>"), ("!", ">")].iter().find(|(open, _)| tag.starts_with(open));
            if let Some((_, close)) = skipped {
                self.0 = tag.split_once(close)?.1;
                continue;
            }
            let end = tag_end(tag)?;
            self.0 = &tag[end + 1..];
            let inner = &tag[..end];
            if let Some(name) = inner.strip_prefix('/') {
                return Some(Token::End(name.trim()));
            }
            let (inner, empty) = inner.strip_suffix('/').map_or((inner, false), |i| (i, true));
            let split = inner.find(char::is_whitespace).unwrap_or(inner.len());
            return Some(Token::Start { name: &inner[..split], attrs: &inner[split..], empty });
        }
    }
}

/// Where the tag starting `tag` (after its `<`) ends: its `>` outside quotes.
fn tag_end(tag: &str) -> Option<usize> {
    let mut quote = None;
    for (i, c) in tag.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, '>') => return Some(i),
            _ => {}
        }
    }
    None
}

/// The `name="value"` pairs of a tag's attributes, values unescaped; it stops at one that
/// does not parse.
fn attributes(mut attrs: &str) -> impl Iterator<Item = (&str, Cow<'_, str>)> {
    std::iter::from_fn(move || {
        let (name, rest) = attrs.split_once('=')?;
        let rest = rest.trim_start();
        let quote = rest.chars().next().filter(|c| matches!(c, '"' | '\''))?;
        let (value, after) = rest[1..].split_once(quote)?;
        attrs = after;
        Some((name.trim(), unescaped(value)))
    })
}

/// `text` with its character and entity references resolved; one that does not resolve (or
/// would give a character XML does not allow) is kept as written.
fn unescaped(text: &str) -> Cow<'_, str> {
    if !text.contains('&') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let resolved = rest.find(';').and_then(|end| Some((entity(&rest[1..end])?, end)));
        if let Some((c, end)) = resolved {
            out.push(c);
            rest = &rest[end + 1..];
        } else {
            out.push('&');
            rest = &rest[1..];
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// The character an entity (between `&` and `;`) stands for.
fn entity(name: &str) -> Option<char> {
    let c = match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        _ => {
            let number = name.strip_prefix('#')?;
            let code = match number.strip_prefix('x') {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => number.parse().ok()?,
            };
            char::from_u32(code)?
        }
    };
    allowed(c).then_some(c)
}

/// Whether XML 1.0 allows `c` in text.
fn allowed(c: char) -> bool {
    !c.is_control() || matches!(c, '\t' | '\n' | '\r')
}

/// `text` as XML text or an attribute's value: markup escaped, characters XML does not allow
/// dropped.
fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars().filter(|&c| allowed(c)) {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A packet as Lightroom Classic writes it: rating and label as attributes, the rest as
    /// elements, with a location, develop settings and an orientation that are not kept.
    const LIGHTROOM: &str = r#"<?xpacket begin="﻿" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="Adobe XMP Core 7.0-c000">
 <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
  <rdf:Description rdf:about=""
    xmlns:xmp="http://ns.adobe.com/xap/1.0/"
    xmlns:dc="http://purl.org/dc/elements/1.1/"
    xmlns:exif="http://ns.adobe.com/exif/1.0/"
    xmlns:crs="http://ns.adobe.com/camera-raw-settings/1.0/"
    xmlns:tiff="http://ns.adobe.com/tiff/1.0/"
    xmlns:lr="http://ns.adobe.com/lightroom/1.0/"
   xmp:Rating="4" xmp:Label="Red" xmp:CreatorTool="Adobe Lightroom"
   exif:GPSLatitude="48,51.5N" crs:CropTop="0.25" crs:HasCrop="True" tiff:Orientation="6">
   <dc:title>
    <rdf:Alt>
     <rdf:li xml:lang="x-default">Dandelions &amp; light</rdf:li>
     <rdf:li xml:lang="fr">Pissenlits</rdf:li>
    </rdf:Alt>
   </dc:title>
   <dc:description><rdf:Alt><rdf:li xml:lang="x-default">Seeds at dusk &#x2014; &lt;late&gt;</rdf:li></rdf:Alt></dc:description>
   <dc:creator><rdf:Seq><rdf:li>Ada</rdf:li><rdf:li>Grace</rdf:li></rdf:Seq></dc:creator>
   <dc:rights><rdf:Alt><rdf:li xml:lang="x-default">© 2026 Ada</rdf:li></rdf:Alt></dc:rights>
   <dc:subject><rdf:Bag><rdf:li>dandelion</rdf:li><rdf:li>meadow</rdf:li><rdf:li><![CDATA[b&w]]></rdf:li></rdf:Bag></dc:subject>
   <lr:hierarchicalSubject><rdf:Bag><rdf:li>Places|Meadow</rdf:li></rdf:Bag></lr:hierarchicalSubject>
   <crs:ToneCurve><rdf:Seq><rdf:li>0, 0</rdf:li></rdf:Seq></crs:ToneCurve>
  </rdf:Description>
 </rdf:RDF>
</x:xmpmeta>
<?xpacket end="w"?>"#;

    fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
        items.iter().map(|&(l, t)| (l.to_owned(), t.to_owned())).collect()
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|&s| s.to_owned()).collect()
    }

    #[test]
    fn lightrooms_packet_keeps_the_credits_and_the_catalogue_and_nothing_else() {
        let kept = Xmp::kept(LIGHTROOM.as_bytes()).expect("kept");
        assert_eq!(kept.alts[0], pairs(&[("x-default", "Dandelions & light"), ("fr", "Pissenlits")]));
        assert_eq!(kept.alts[1], pairs(&[("x-default", "Seeds at dusk \u{2014} <late>")]));
        assert_eq!(kept.alts[2], pairs(&[("x-default", "© 2026 Ada")]));
        let lists = [
            strings(&["Ada", "Grace"]),
            strings(&["dandelion", "meadow", "b&w"]),
            strings(&["Places|Meadow"]),
        ];
        assert_eq!(kept.lists, lists);
        assert_eq!((kept.rating, kept.label.as_deref()), (Some(4), Some("Red")));
        assert_eq!(kept.properties(), 8);
        let packet = String::from_utf8(kept.packet()).expect("UTF-8");
        for dropped in ["GPS", "crs:", "Orientation", "CreatorTool", "0, 0"] {
            assert!(!packet.contains(dropped), "{dropped} in {packet}");
        }
        assert_eq!(Xmp::kept(packet.as_bytes()), Some(kept), "{packet}");
    }

    #[test]
    fn other_prefixes_elements_and_bare_values_are_read_by_their_namespace() {
        let packet = r#"<x:xmpmeta xmlns:x="adobe:ns:meta/"><r:RDF xmlns:r="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
            <r:Description xmlns:d='http://purl.org/dc/elements/1.1/' xmlns:b='http://ns.adobe.com/xap/1.0/'>
            <b:Rating> 5 </b:Rating><b:Label>Green</b:Label><d:title>Bare</d:title>
            <d:subject><r:Bag><r:li>one</r:li><r:li/><r:li></r:li></r:Bag></d:subject>
            <dc:creator><rdf:Seq><rdf:li>not Dublin Core here</rdf:li></rdf:Seq></dc:creator>
            </r:Description></r:RDF></x:xmpmeta>"#;
        let kept = Xmp::kept(packet.as_bytes()).expect("kept");
        assert_eq!(kept.alts[0], pairs(&[("x-default", "Bare")]));
        assert_eq!(kept.lists, [vec![], strings(&["one"]), vec![]]);
        assert_eq!((kept.rating, kept.label.as_deref()), (Some(5), Some("Green")));
    }

    #[test]
    fn what_is_not_xmp_or_keeps_nothing_gives_none() {
        let rating_out_of_range = b"<x xmlns:xmp='http://ns.adobe.com/xap/1.0/' xmp:Rating='9'/>";
        let none = [&b""[..], b"\xFF\xFE<x/>", b"<a><b>text</b></a>", rating_out_of_range];
        assert!(none.iter().all(|packet| Xmp::kept(packet).is_none()));
    }

    #[test]
    fn a_packet_past_the_text_budget_keeps_what_fits_and_stays_a_jpeg_segment() {
        let keywords =
            (0..9000).map(|k| format!("<rdf:li>\"&lt;{k}&gt;\"</rdf:li>")).collect::<Vec<_>>().concat();
        let packet = format!(
            "<d xmlns:dc='{DC}'><dc:title><rdf:Alt><rdf:li>first</rdf:li></rdf:Alt></dc:title>\
             <dc:subject><rdf:Bag>{keywords}</rdf:Bag></dc:subject></d>"
        );
        let kept = Xmp::kept(packet.as_bytes()).expect("kept");
        let padded = [packet.as_bytes(), &vec![b' '; MAX_PACKET_BYTES - packet.len() + 1]].concat();
        assert_eq!(Xmp::kept(&padded), None, "a packet over 1 MiB is not read");
        assert_eq!(kept.alts[0], pairs(&[("x-default", "first")]));
        assert_eq!(kept.lists[1][..2], strings(&["\"<0>\"", "\"<1>\""]));
        assert!((500..9000).contains(&kept.lists[1].len()), "{}", kept.lists[1].len());
        let written = kept.packet().len();
        assert!((MAX_TEXT_BYTES / 2..65_000).contains(&written), "{written}");
    }

    #[test]
    fn cut_or_damaged_packets_never_panic_and_what_they_keep_round_trips() {
        let bytes = LIGHTROOM.as_bytes();
        for len in 0..bytes.len() {
            if let Some(kept) = Xmp::kept(&bytes[..len]) {
                assert_eq!(Xmp::kept(&kept.packet()), Some(kept), "cut at {len}");
            }
        }
        for at in (0..bytes.len()).step_by(3) {
            for flip in [b'<', b'>', b'"', b'&', b'/', b';', 0x01] {
                let mut damaged = bytes.to_vec();
                damaged[at] = flip;
                if let Some(kept) = Xmp::kept(&damaged) {
                    assert_eq!(Xmp::kept(&kept.packet()), Some(kept), "byte {at} = {flip:#x}");
                }
            }
        }
    }
}
