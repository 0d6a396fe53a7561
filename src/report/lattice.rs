//! The consistency-model lattice as a layered drawing: strongest models on
//! top, an edge from each model to the weaker ones it implies (transitive
//! edges dropped), the models a check ruled out filled in red.
//!
//! Layout: longest-path layering, dummy vertices on edges that skip layers,
//! then a few barycentre sweeps to reduce crossings (Sugiyama's scheme).

use super::svg::{esc, num, text_width, Svg};
use crate::model::{canonical_name, friendly_name, tables};
use std::collections::BTreeSet;

const FONT: f64 = 11.0;
const NODE_H: f64 = 20.0;
const LAYER_GAP: f64 = 52.0;
const NODE_GAP: f64 = 12.0;
const DUMMY_W: f64 = 6.0;
const MARGIN: f64 = 10.0;

/// How a model fares in a report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mark {
    /// One of the weakest models ruled out (`not`).
    Not,
    /// Ruled out because a weaker model is (`also-not`).
    AlsoNot,
    /// Not ruled out by this check.
    Open,
}

/// The lattice: canonical model names and implication edges (stronger →
/// weaker), transitively reduced.
pub(crate) struct Lattice {
    pub(crate) names: Vec<&'static str>,
    pub(crate) edges: Vec<(usize, usize)>,
}

impl Lattice {
    pub(crate) fn from_tables() -> Lattice {
        let mut names: BTreeSet<&'static str> = BTreeSet::new();
        for &(a, bs) in tables::MODEL_IMPLICATIONS {
            names.insert(canonical_name(a));
            names.extend(bs.iter().map(|b| canonical_name(b)));
        }
        let names: Vec<&'static str> = names.into_iter().collect();
        let id = |n: &str| {
            names
                .binary_search(&canonical_name(n))
                .expect("every model is a vertex")
        };
        let mut edges: BTreeSet<(usize, usize)> = BTreeSet::new();
        for &(a, bs) in tables::MODEL_IMPLICATIONS {
            for b in bs.iter() {
                let (x, y) = (id(a), id(b));
                if x != y {
                    edges.insert((x, y));
                }
            }
        }
        let edges: Vec<(usize, usize)> = edges.into_iter().collect();
        let mut succ = vec![Vec::new(); names.len()];
        for &(a, b) in &edges {
            succ[a].push(b);
        }
        // Drop a → b when b is reachable from a through another successor.
        let reaches_without = |a: usize, b: usize| -> bool {
            let mut seen = vec![false; names.len()];
            let mut stack: Vec<usize> = succ[a].iter().copied().filter(|&c| c != b).collect();
            while let Some(v) = stack.pop() {
                if v == b {
                    return true;
                }
                if !std::mem::replace(&mut seen[v], true) {
                    stack.extend(succ[v].iter().copied());
                }
            }
            false
        };
        let edges = edges
            .iter()
            .copied()
            .filter(|&(a, b)| !reaches_without(a, b))
            .collect();
        Lattice { names, edges }
    }
}

/// A vertex of the layered drawing: a model, or a bend point of a long edge.
struct Vertex {
    model: Option<usize>,
    layer: usize,
    w: f64,
    x: f64,
}

/// Assigns layers by longest path from the strongest models; vertices left
/// over by a cycle (the tables have none) go below everything.
fn layers(n: usize, edges: &[(usize, usize)]) -> Vec<usize> {
    let mut indeg = vec![0usize; n];
    let mut succ = vec![Vec::new(); n];
    for &(a, b) in edges {
        succ[a].push(b);
        indeg[b] += 1;
    }
    let mut layer = vec![0usize; n];
    let mut done = vec![false; n];
    let mut queue: Vec<usize> = (0..n).filter(|&v| indeg[v] == 0).collect();
    while let Some(v) = queue.pop() {
        done[v] = true;
        for &w in &succ[v] {
            layer[w] = layer[w].max(layer[v] + 1);
            indeg[w] -= 1;
            if indeg[w] == 0 {
                queue.push(w);
            }
        }
    }
    let deepest = layer.iter().copied().max().unwrap_or(0);
    for v in 0..n {
        if !done[v] {
            layer[v] = deepest + 1;
        }
    }
    layer
}

/// Longest-path layers from the top or from the bottom, whichever leaves
/// fewer layers for edges to skip (each skipped layer is a bend).
fn compact_layers(n: usize, edges: &[(usize, usize)]) -> Vec<usize> {
    let from_top = layers(n, edges);
    let reversed: Vec<(usize, usize)> = edges.iter().map(|&(a, b)| (b, a)).collect();
    let up = layers(n, &reversed);
    let deepest = up.iter().copied().max().unwrap_or(0);
    let from_bottom: Vec<usize> = up.iter().map(|&l| deepest - l).collect();
    let skipped = |l: &[usize]| -> usize {
        edges
            .iter()
            .map(|&(a, b)| l[b].saturating_sub(l[a] + 1))
            .sum()
    };
    if skipped(&from_bottom) < skipped(&from_top) {
        from_bottom
    } else {
        from_top
    }
}

/// The SVG of the lattice with models marked by `mark(canonical name)`.
pub(crate) fn lattice_svg(mark: &dyn Fn(&str) -> Mark) -> String {
    let lat = Lattice::from_tables();
    let n = lat.names.len();
    let layer = compact_layers(n, &lat.edges);
    let mut verts: Vec<Vertex> = (0..n)
        .map(|i| Vertex {
            model: Some(i),
            layer: layer[i],
            w: text_width(friendly_name(lat.names[i]), FONT) + 12.0,
            x: 0.0,
        })
        .collect();
    // Each edge becomes a chain of vertices, one per layer it crosses.
    let mut chains: Vec<Vec<usize>> = Vec::with_capacity(lat.edges.len());
    let mut up: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut down: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(a, b) in &lat.edges {
        let mut chain = vec![a];
        for l in layer[a] + 1..layer[b] {
            verts.push(Vertex {
                model: None,
                layer: l,
                w: DUMMY_W,
                x: 0.0,
            });
            up.push(Vec::new());
            down.push(Vec::new());
            chain.push(verts.len() - 1);
        }
        chain.push(b);
        for w in chain.windows(2) {
            down[w[0]].push(w[1]);
            up[w[1]].push(w[0]);
        }
        chains.push(chain);
    }
    let depth = verts.iter().map(|v| v.layer).max().unwrap_or(0) + 1;
    let mut rows: Vec<Vec<usize>> = vec![Vec::new(); depth];
    for (i, v) in verts.iter().enumerate() {
        rows[v.layer].push(i);
    }
    // Barycentre sweeps: order each row by the mean position of its
    // neighbours in the row above (down sweep) or below (up sweep).
    let mut pos = vec![0.0f64; verts.len()];
    let place = |rows: &Vec<Vec<usize>>, pos: &mut Vec<f64>| {
        for row in rows {
            for (i, &v) in row.iter().enumerate() {
                pos[v] = i as f64;
            }
        }
    };
    place(&rows, &mut pos);
    for sweep in 0..8 {
        let order: Vec<usize> = if sweep % 2 == 0 {
            (1..depth).collect()
        } else {
            (0..depth.saturating_sub(1)).rev().collect()
        };
        for l in order {
            let nbrs = if sweep % 2 == 0 { &up } else { &down };
            let mut keyed: Vec<(f64, usize)> = rows[l]
                .iter()
                .map(|&v| {
                    let ns = &nbrs[v];
                    let bc = if ns.is_empty() {
                        pos[v]
                    } else {
                        ns.iter().map(|&u| pos[u]).sum::<f64>() / ns.len() as f64
                    };
                    (bc, v)
                })
                .collect();
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            rows[l] = keyed.into_iter().map(|(_, v)| v).collect();
            for (i, &v) in rows[l].iter().enumerate() {
                pos[v] = i as f64;
            }
        }
    }
    // Rows packed and centred on the widest one, then pulled towards their
    // neighbours' mean position (keeping order and spacing) so edges run
    // straighter.
    let widths: Vec<f64> = rows
        .iter()
        .map(|row| {
            row.iter().map(|&v| verts[v].w).sum::<f64>()
                + NODE_GAP * row.len().saturating_sub(1) as f64
        })
        .collect();
    let widest = widths.iter().copied().fold(0.0, f64::max);
    for (row, row_w) in rows.iter().zip(&widths) {
        let mut x = (widest - row_w) / 2.0;
        for &v in row {
            verts[v].x = x + verts[v].w / 2.0;
            x += verts[v].w + NODE_GAP;
        }
    }
    for _ in 0..12 {
        let want: Vec<f64> = (0..verts.len())
            .map(|v| {
                let ns = up[v].iter().chain(&down[v]);
                let (sum, k) = ns.fold((0.0, 0usize), |(s, k), &u| (s + verts[u].x, k + 1));
                if k == 0 {
                    verts[v].x
                } else {
                    sum / k as f64
                }
            })
            .collect();
        for row in &rows {
            let mut right = f64::NEG_INFINITY;
            for &v in row {
                let x = want[v].max(right + NODE_GAP + verts[v].w / 2.0);
                verts[v].x = x;
                right = x + verts[v].w / 2.0;
            }
            let shift =
                row.iter().map(|&v| want[v] - verts[v].x).sum::<f64>() / row.len().max(1) as f64;
            for &v in row {
                verts[v].x += shift;
            }
        }
    }
    let left = verts
        .iter()
        .map(|v| v.x - v.w / 2.0)
        .fold(f64::INFINITY, f64::min);
    let right = verts
        .iter()
        .map(|v| v.x + v.w / 2.0)
        .fold(f64::NEG_INFINITY, f64::max);
    for v in verts.iter_mut() {
        v.x += MARGIN - left;
    }
    let width = right - left;
    let y = |l: usize| MARGIN + l as f64 * LAYER_GAP;
    let mut svg = Svg::new();
    let marks: Vec<Mark> = lat.names.iter().map(|m| mark(m)).collect();
    for chain in &chains {
        let (a, b) = (chain[0], chain[chain.len() - 1]);
        let ruled = marks[a] != Mark::Open && marks[b] != Mark::Open;
        let mut d = format!("M{},{}", num(verts[a].x), num(y(verts[a].layer) + NODE_H));
        for &v in &chain[1..chain.len() - 1] {
            let cy = y(verts[v].layer) + NODE_H / 2.0;
            d.push_str(&format!(" L{},{}", num(verts[v].x), num(cy)));
        }
        d.push_str(&format!(" L{},{}", num(verts[b].x), num(y(verts[b].layer))));
        let stroke = if ruled { "#e57373" } else { "#9e9e9e" };
        svg.raw(&format!(
            r#"<path d="{d}" fill="none" stroke="{stroke}" stroke-width="1"/>"#
        ));
        svg.raw("\n");
    }
    for v in &verts {
        let Some(m) = v.model else { continue };
        let name = friendly_name(lat.names[m]);
        let (fill, stroke, text, weight) = match marks[m] {
            Mark::Not => ("#d32f2f", "#b71c1c", "#ffffff", "bold"),
            Mark::AlsoNot => ("#ffcdd2", "#e57373", "#b71c1c", "normal"),
            Mark::Open => ("#f1f8e9", "#9e9e9e", "#33691e", "normal"),
        };
        let x0 = v.x - v.w / 2.0;
        let y0 = y(v.layer);
        svg.raw(&format!(
            "<g class=\"model {}\"><title>{}</title>\n",
            match marks[m] {
                Mark::Not => "not",
                Mark::AlsoNot => "also-not",
                Mark::Open => "open",
            },
            esc(&format!("{name} ({})", lat.names[m]))
        ));
        svg.rect(
            x0,
            y0,
            v.w,
            NODE_H,
            &format!(r#"rx="4" fill="{fill}" stroke="{stroke}""#),
        );
        svg.text(
            v.x,
            y0 + NODE_H / 2.0 + FONT * 0.35,
            FONT,
            name,
            &format!(r#"text-anchor="middle" fill="{text}" font-weight="{weight}""#),
        );
        svg.raw("</g>\n");
    }
    let height = y(depth - 1) + NODE_H + MARGIN;
    svg.finish(
        width + 2.0 * MARGIN,
        height,
        "consistency models; ruled-out models in red",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(l: &Lattice, name: &str) -> usize {
        l.names.binary_search(&canonical_name(name)).unwrap()
    }

    #[test]
    fn transitive_edges_are_dropped_and_direct_ones_kept() {
        let l = Lattice::from_tables();
        let (ss, ser, si) = (
            id(&l, "strict-serializable"),
            id(&l, "serializable"),
            id(&l, "snapshot-isolation"),
        );
        let sss = id(&l, "strong-session-serializable");
        assert!(l.edges.contains(&(ser, si)));
        assert!(l.edges.contains(&(ss, sss)));
        assert!(l.edges.contains(&(sss, ser)));
        // strict-serializable → serializable holds through strong-session-serializable.
        assert!(!l.edges.contains(&(ss, ser)));
        assert!(!l.edges.contains(&(ss, si)));
    }

    #[test]
    fn stronger_models_sit_above_weaker_ones() {
        let l = Lattice::from_tables();
        let layer = compact_layers(l.names.len(), &l.edges);
        for &(a, b) in &l.edges {
            assert!(
                layer[a] < layer[b],
                "{} not above {}",
                l.names[a],
                l.names[b]
            );
        }
    }

    #[test]
    fn ruled_out_models_are_marked() {
        let svg = lattice_svg(&|m| match m {
            "PL-2" => Mark::Not,
            "PL-3" => Mark::AlsoNot,
            _ => Mark::Open,
        });
        let doc = roxmltree::Document::parse(&svg).expect("well-formed SVG");
        let class_of = |name: &str| {
            doc.descendants()
                .find(|n| n.has_tag_name("text") && n.text() == Some(name))
                .and_then(|t| t.parent())
                .and_then(|g| g.attribute("class"))
                .map(str::to_string)
        };
        assert_eq!(class_of("read-committed").as_deref(), Some("model not"));
        assert_eq!(class_of("serializable").as_deref(), Some("model also-not"));
        assert_eq!(class_of("read-uncommitted").as_deref(), Some("model open"));
    }
}
