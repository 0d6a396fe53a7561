//! PNG output through resvg, a pure-Rust SVG rasterizer, with the system's
//! fonts. Without any font the pictures are still drawn, only without text;
//! the page says so.

use resvg::tiny_skia::{Pixmap, Transform};
use resvg::usvg::{fontdb, Options, Tree};
use std::io;

/// Pixels per SVG user unit: diagrams stay sharp on dense screens.
pub(crate) const SCALE: f32 = 1.5;

/// Monospace and sans-serif families tried in order; the first present wins.
const MONO: &[&str] = &[
    "DejaVu Sans Mono",
    "Liberation Mono",
    "Noto Sans Mono",
    "Courier New",
    "Menlo",
];
const SANS: &[&str] = &[
    "DejaVu Sans",
    "Liberation Sans",
    "Noto Sans",
    "Arial",
    "Helvetica",
];

/// Renders SVG documents to PNG.
pub(crate) struct Rasterizer {
    options: Options<'static>,
    has_fonts: bool,
}

impl Rasterizer {
    /// A rasterizer with the system's fonts.
    pub(crate) fn with_system_fonts() -> Rasterizer {
        let mut db = fontdb::Database::new();
        db.load_system_fonts();
        Rasterizer::with_fonts(db)
    }

    /// A rasterizer with these fonts; generic families map to faces present.
    pub(crate) fn with_fonts(mut db: fontdb::Database) -> Rasterizer {
        let families: Vec<String> = db
            .faces()
            .flat_map(|f| f.families.iter().map(|(name, _)| name.clone()))
            .collect();
        let pick = |wanted: &[&str], monospaced: bool| -> Option<String> {
            wanted
                .iter()
                .find(|w| families.iter().any(|f| f == *w))
                .map(|w| w.to_string())
                .or_else(|| {
                    db.faces()
                        .find(|f| f.monospaced == monospaced)
                        .or_else(|| db.faces().next())
                        .and_then(|f| f.families.first().map(|(n, _)| n.clone()))
                })
        };
        let mono = pick(MONO, true);
        let sans = pick(SANS, false);
        if let Some(m) = &mono {
            db.set_monospace_family(m.clone());
        }
        if let Some(s) = &sans {
            db.set_sans_serif_family(s.clone());
            db.set_serif_family(s.clone());
        }
        let has_fonts = !db.is_empty();
        let mut options = Options::default();
        *options.fontdb_mut() = db;
        Rasterizer { options, has_fonts }
    }

    /// True when text can be drawn.
    pub(crate) fn has_fonts(&self) -> bool {
        self.has_fonts
    }

    /// The PNG bytes of `svg`.
    pub(crate) fn render(&self, svg: &str) -> io::Result<Vec<u8>> {
        let tree = Tree::from_str(svg, &self.options).map_err(|e| {
            io::Error::new(io::ErrorKind::InvalidData, format!("cannot read SVG: {e}"))
        })?;
        let size = tree.size();
        let (w, h) = (
            (size.width() * SCALE).ceil() as u32,
            (size.height() * SCALE).ceil() as u32,
        );
        let mut pixmap = Pixmap::new(w.max(1), h.max(1))
            .ok_or_else(|| io::Error::other(format!("picture too large to rasterize: {w}x{h}")))?;
        resvg::render(
            &tree,
            Transform::from_scale(SCALE, SCALE),
            &mut pixmap.as_mut(),
        );
        pixmap
            .encode_png()
            .map_err(|e| io::Error::other(format!("cannot encode PNG: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SVG: &str = r##"<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40"><rect width="120" height="40" fill="#ffffff"/><text x="4" y="28" font-size="20" font-family="monospace">T1 ww</text></svg>"##;

    fn dark_pixels(png: &[u8]) -> usize {
        let p = Pixmap::decode_png(png).expect("a PNG");
        p.pixels().iter().filter(|c| c.red() < 128).count()
    }

    #[test]
    fn without_fonts_the_picture_is_drawn_without_text() {
        let r = Rasterizer::with_fonts(fontdb::Database::new());
        assert!(!r.has_fonts());
        let png = r.render(SVG).expect("renders without fonts");
        assert_eq!(dark_pixels(&png), 0);
        let p = Pixmap::decode_png(&png).unwrap();
        assert_eq!((p.width(), p.height()), (180, 60));
    }

    #[test]
    fn system_fonts_draw_text_when_present() {
        let r = Rasterizer::with_system_fonts();
        let png = r.render(SVG).expect("renders");
        if r.has_fonts() {
            assert!(dark_pixels(&png) > 20, "text was not drawn");
        } else {
            eprintln!("no system font: text drawing not checked");
        }
    }

    #[test]
    fn malformed_svg_is_an_error_not_a_panic() {
        let r = Rasterizer::with_fonts(fontdb::Database::new());
        assert!(r.render("<svg").is_err());
    }
}
